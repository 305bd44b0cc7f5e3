"""Traffic Jam renders: text (ansi) and a Pillow picture (rgb_array).

Both read a record and never change it. ``seat`` is the viewer whose hand is
shown; ``None`` shows the hand of the player to move.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from trafficenvs.traffic_jam import kernels as K

if TYPE_CHECKING:
    from trafficenvs.traffic_jam.game import TrafficJamGame

TRIP_NAMES = ("to the country", "back to the city")
STAGE_NAMES = ("first cards", "car and surprise")


def _cards(game: TrafficJamGame, counts: np.ndarray, time: int | None = None) -> list[int]:
    out: list[int] = []
    for k in range(game.num_kinds):
        if time is None or game.deck.kinds[k].time == time:
            out += [k] * int(counts[k])
    return out


def _viewer(game: TrafficJamGame, rec: np.void, seat: int | None) -> int:
    return int(rec["cur"]) if seat is None else int(seat)


def _header(rec: np.void) -> str:
    if rec["over"]:
        return "Traffic Jam - game over"
    return (
        f"Traffic Jam - round {rec['round'] + 1}/3, trip {rec['trip'] + 1}/2 "
        f"({TRIP_NAMES[rec['trip']]}), stage {rec['stage'] + 1}: {STAGE_NAMES[rec['stage']]}"
        f" - player_{rec['cur']} to move"
    )


def render_text(game: TrafficJamGame, rec: np.void, seat: int | None) -> str:
    n = game.num_players
    kinds = game.deck.kinds
    lines = [_header(rec), f"Deck {rec['deck_n']} cards, discard pile {rec['discard_n']}"]
    if rec["stage"] == 1:
        lines.append("Revealed: " + ", ".join(
            f"player_{p} {kinds[rec['shown1'][p]].label}" for p in range(n)
            if rec["shown1"][p] >= 0))
    lines.append(f"Roads (jam when size > {n}):")
    for t, tname in enumerate(K.TIMES):
        cards = _cards(game, rec["road"], t)
        size = K.road_size(rec, game.cfg[0], t)
        txt = ", ".join(f"{K.TYPES[kinds[k].type]}({kinds[k].joy})" for k in cards) or "-"
        lines.append(f"  {tname:8s} size {size}: {txt}")
    if rec["last_jam"][0] >= 0:
        jams = ", ".join(
            f"{tname} {'JAM' if rec['last_jam'][t] else 'free'}" for t, tname in enumerate(K.TIMES)
        )
        lines.append(f"Last trip: {jams}")
        for p in range(n):
            c = rec["last_car"][p]
            if c >= 0:
                ok = "scored" if rec["last_scored"][p] else "no joy"
                played = "".join(f", {what} {kinds[k].label}" for what, k in (
                    ("first", rec["last_first"][p]), ("surprise", rec["last_sur"][p])) if k >= 0)
                lines.append(f"  player_{p}: car on {kinds[c].label} - {ok}{played}")
    lines.append("Scores:")
    for p in range(n):
        mark = " (winner)" if rec["over"] and rec["winner"][p] else ""
        lines.append(f"  player_{p}: {rec['joy'][p]} joy, {rec['vcount'][p]} cards{mark}")
    v = _viewer(game, rec, seat)
    hand = _cards(game, rec["hand"][v])
    lines.append(f"Hand of player_{v}: " + (", ".join(kinds[k].label for k in hand) or "-"))
    return "\n".join(lines)


TIME_COLOURS = ((250, 226, 160), (168, 212, 250), (70, 80, 140))
TYPE_ABBR = ("VAN", "CAB", "BUG", "TRK", "BUS", "MOTO", "BALN", "ICE")
SEAT_COLOURS = ((220, 50, 47), (38, 139, 210), (133, 153, 0), (211, 54, 130), (181, 137, 0),
                (42, 161, 152))
CARD_W, CARD_H, GAP = 58, 74, 6


def _draw_card(d: ImageDraw.ImageDraw, font, x: int, y: int, game: TrafficJamGame, k: int) -> None:
    card = game.deck.kinds[k]
    fill = TIME_COLOURS[card.time]
    ink = (255, 255, 255) if card.time == 2 else (20, 20, 20)
    d.rounded_rectangle([x, y, x + CARD_W, y + CARD_H], radius=6, fill=fill, outline=(40, 40, 40),
                        width=2)
    d.text((x + 5, y + 4), str(card.joy), fill=ink, font=font)
    d.text((x + 5, y + 30), TYPE_ABBR[card.type], fill=ink, font=font)
    d.text((x + 5, y + CARD_H - 16), K.CONDITIONS[card.condition], fill=ink, font=font)


def render_image(game: TrafficJamGame, rec: np.void, seat: int | None) -> np.ndarray:
    n = game.num_players
    font = ImageFont.load_default()
    width = 40 + 12 * (CARD_W + GAP) + 260
    lane_h = CARD_H + 20
    height = 50 + 3 * lane_h + 40 + CARD_H + 40
    img = Image.new("RGB", (width, height), (245, 245, 240))
    d = ImageDraw.Draw(img)
    d.text((12, 12), _header(rec), fill=(0, 0, 0), font=font)
    d.text((12, 28), f"deck {rec['deck_n']}  discard {rec['discard_n']}", fill=(60, 60, 60),
           font=font)
    for t, tname in enumerate(K.TIMES):
        y = 50 + t * lane_h
        d.rectangle([10, y, 40 + 12 * (CARD_W + GAP), y + lane_h - 6], fill=(200, 200, 196))
        size = K.road_size(rec, game.cfg[0], t)
        jam = rec["last_jam"][t]
        status = f"size {size}/{n}" + ("" if jam < 0 else (" last: JAM" if jam else " last: free"))
        d.text((14, y + 4), f"{tname}", fill=(0, 0, 0), font=font)
        d.text((14, y + lane_h - 22), status, fill=(90, 0, 0) if size > n else (0, 70, 0),
               font=font)
        lane = _cards(game, rec["road"], t)
        room = 40 + 12 * (CARD_W + GAP) - 110 - CARD_W
        dx = min(CARD_W + GAP, room // max(1, len(lane) - 1))  # overlap a crowded road
        for i, k in enumerate(lane):
            _draw_card(d, font, 110 + i * dx, y + 6, game, k)
    v = _viewer(game, rec, seat)
    y = 50 + 3 * lane_h + 10
    d.text((12, y), f"hand of player_{v}", fill=SEAT_COLOURS[v], font=font)
    for i, k in enumerate(_cards(game, rec["hand"][v])):
        _draw_card(d, font, 12 + i * (CARD_W + GAP), y + 18, game, k)
    x0 = 40 + 12 * (CARD_W + GAP) + 16
    d.text((x0, 50), "joy  cards", fill=(0, 0, 0), font=font)
    for p in range(n):
        yy = 70 + p * 24
        d.ellipse([x0, yy, x0 + 14, yy + 14], fill=SEAT_COLOURS[p])
        win = "  WIN" if rec["over"] and rec["winner"][p] else ""
        d.text((x0 + 22, yy), f"player_{p}: {rec['joy'][p]:3d}  {rec['vcount'][p]}{win}",
               fill=(0, 0, 0), font=font)
    return np.asarray(img, dtype=np.uint8).copy()
