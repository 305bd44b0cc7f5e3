"""Renders: a line of text (ansi) and a picture of the queue (rgb_array)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from toy_game.rules.layout import MAX_CARS

if TYPE_CHECKING:
    from toy_game.game import TollGateGame


def render_text(game: TollGateGame, rec: np.void, seat: int | None) -> str:
    """The queue as text, and whose turn it is."""
    return (f"Toll Gate: {int(rec['cars'])} cars waiting  " + "o" * int(rec["cars"])
            + f"\nseat {int(rec['cur'])} to move" + (" (over)" if rec["over"] else ""))


def render_image(game: TollGateGame, rec: np.void, seat: int | None) -> np.ndarray:
    """The queue as a picture: one red square per waiting car."""
    img = np.full((40, 20 * MAX_CARS + 20, 3), 255, np.uint8)
    for c in range(int(rec["cars"])):
        img[12:28, 10 + 20 * c: 26 + 20 * c] = (200, 40, 40)
    return img
