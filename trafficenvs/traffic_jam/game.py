"""Traffic Jam as a :class:`~trafficenvs.core.game.Game`: options, config and names. Its
state dicts and invariants are in ``state.py``, its renders in ``render.py``."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from trafficenvs.core.files import option_bool
from trafficenvs.core.game import Game
from trafficenvs.traffic_jam import state
from trafficenvs.traffic_jam.rules import stages  # noqa: F401  (parallel_env_class)
from trafficenvs.traffic_jam.rules.deck import Deck, DeckSpec, check_deck_fits, load_deck
from trafficenvs.traffic_jam.rules.layout import (
    CFG_DTYPE,
    MAX_PLAYERS,
    NUM_TYPES,
    RECORD_DTYPE,
    action_layout,
    obs_layout,
    size_added,
)
from trafficenvs.traffic_jam.spec import SPEC


class TrafficJamGame(Game):
    """Traffic Jam for 2-6 players (T1) with a given deck (T2).

    Options: ``deck`` (None for the shipped default, a CSV/JSON path or a list of
    rows) and ``shaping`` (give each player its joy points as reward when scored,
    on top of the zero-sum result; off by default, C2).
    """

    spec = SPEC
    record_dtype = RECORD_DTYPE
    min_players = 2
    max_players = MAX_PLAYERS
    #: both stages are simultaneous (T3): the AEC env takes them seat by seat and reveals
    #: only after the last seat, so it is ``is_parallelizable`` (``core/aec.py``) and this
    #: env plays each stage as one step (``trafficenvs.make_parallel``). Its compiled verbs
    #: (``rules/stages.py``) are imported by this module, which is always imported inside
    #: the package's compile cache (``spec.load``): imported first by a user's ``from
    #: trafficenvs import traffic_jam_v1``, they would be cached beside the source, where
    #: an edit of the rules would not invalidate them
    parallel_env_class: ClassVar[str] = "trafficenvs.traffic_jam_v1:TrafficJamParallelEnv"

    def __init__(self, num_players: int = 4, deck: DeckSpec = None, shaping: bool = False):
        self.num_players = self.check_num_players(num_players)
        self.deck: Deck = load_deck(deck)
        check_deck_fits(self.deck, self.num_players)
        self.shaping = option_bool(shaping, "shaping")
        self.num_kinds = len(self.deck.kinds)
        self.obs_layout = obs_layout(self.num_players, self.deck.kinds, self.deck.counts)
        self.action_layout = action_layout(self.num_kinds)
        self.num_actions = self.action_layout.size
        self.obs_dim = self.obs_layout.size
        cfg = np.zeros(1, CFG_DTYPE)
        c = cfg[0]
        for key, offset in self.obs_layout.offsets().items():
            c[key] = offset
        c["a_pair"] = self.action_layout.field("car_surprise").offset
        c["ob_seat_stride"] = self.obs_layout.field("seats").stride
        for i, card in enumerate(self.deck.kinds):
            c["kind_slot"][i] = card.time * NUM_TYPES + card.type
            c["kind_add"][3 * i: 3 * i + 3] = [size_added(card.type, n) for n in range(3)]
        c["num_players"] = self.num_players
        c["num_kinds"] = self.num_kinds
        c["deck_size"] = self.deck.size
        c["shaping"] = self.shaping
        for i, (card, n) in enumerate(zip(self.deck.kinds, self.deck.counts)):
            c["kind_time"][i] = card.time
            c["kind_type"][i] = card.type
            c["kind_cond"][i] = card.condition
            c["kind_joy"][i] = card.joy
            c["kind_count"][i] = n
        self.cfg = cfg

    # -- names -----------------------------------------------------------------
    def decode(self, action: int) -> tuple[int, int | None]:
        """``(card, None)`` for a stage-1 action, ``(car, surprise)`` for stage 2."""
        k = self.num_kinds
        if not 0 <= action < self.num_actions:
            raise ValueError(f"action {action} out of range 0..{self.num_actions - 1}")
        pairs = self.action_layout.field("car_surprise")
        if action < pairs.offset:
            return action, None
        car, sur = divmod(action - pairs.offset, k)
        return car, sur

    def action_name(self, rec: np.void, action: int) -> str:
        a, b = self.decode(int(action))
        kinds = self.deck.kinds
        if b is None:
            return f"play {kinds[a].label}"
        return f"car on {kinds[a].label}, surprise {kinds[b].label}"

    def scores(self, rec: np.void) -> np.ndarray:
        return rec["joy"][: self.num_players].astype(np.float64)

    # -- state dicts (state.py) -------------------------------------------------
    def to_dict(self, rec: np.void) -> dict[str, Any]:
        return state.to_dict(self, rec)

    def from_dict(self, state_dict: dict[str, Any]) -> np.ndarray:
        return state.from_dict(self, state_dict)

    def check_invariants(self, rec: np.void) -> None:
        state.check_invariants(self, rec)

    # -- renders ---------------------------------------------------------------
    def render_ansi(self, rec: np.void, seat: int | None) -> str:
        from trafficenvs.traffic_jam.render import render_text

        return render_text(self, rec, seat)

    def render_rgb(self, rec: np.void, seat: int | None) -> np.ndarray:
        from trafficenvs.traffic_jam.render import render_image

        return render_image(self, rec, seat)
