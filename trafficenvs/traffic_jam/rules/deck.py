"""Traffic Jam decks as data (ruling T2): loading, validation, and card kinds.

A deck is a table with one row per card: ``time`` (morning/day/night), ``type``
(one of :data:`~trafficenvs.traffic_jam.kernels.TYPES`), ``joy`` (points, an int)
and ``condition`` (free/jam/either: when the card's joy is earned). The shipped
default is ``data/default_deck.csv``. Users may pass a CSV or JSON path, or a list
of rows (dicts with those keys, or 4-tuples).

Identical rows are one *kind*; kinds are sorted by (time, type, joy, condition) so
action and observation layouts are stable for a given deck.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trafficenvs.core.files import read_json, read_text
from trafficenvs.traffic_jam.rules.layout import (
    CONDITIONS,
    MAX_CARDS,
    MAX_KINDS,
    ROUNDS,
    TIMES,
    TRIPS,
    TYPES,
)

DEFAULT_DECK = Path(__file__).resolve().parent.parent / "data" / "default_deck.csv"
FIELDS = ("time", "type", "joy", "condition")

DeckSpec = str | Path | Sequence[Any] | None


@dataclass(frozen=True, order=True)
class Card:
    """One kind of card. ``time``, ``type`` and ``condition`` are indices."""

    time: int
    type: int
    joy: int
    condition: int

    @property
    def name(self) -> str:
        """Unique readable id, e.g. ``"day:van:5:free"`` (used in state dicts)."""
        return (
            f"{TIMES[self.time]}:{TYPES[self.type]}:{self.joy}:{CONDITIONS[self.condition]}"
        )

    @property
    def label(self) -> str:
        """Short text for people, e.g. ``"day van (5)"``."""
        return f"{TIMES[self.time]} {TYPES[self.type]} ({self.joy})"


@dataclass(frozen=True)
class Deck:
    kinds: tuple[Card, ...]
    counts: tuple[int, ...]

    @property
    def size(self) -> int:
        return sum(self.counts)

    def index(self, name: str) -> int:
        for i, k in enumerate(self.kinds):
            if k.name == name:
                return i
        raise ValueError(f"unknown card {name!r}; this deck has {[k.name for k in self.kinds]}")


def _parse_row(row: Any, where: str) -> Card:
    if isinstance(row, dict):
        unknown = set(row) - set(FIELDS)
        missing = set(FIELDS) - set(row)
        if unknown or missing:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}, missing {sorted(missing)}")
        vals = [row[f] for f in FIELDS]
    elif isinstance(row, (list, tuple)) and len(row) == 4:
        vals = list(row)
    else:
        raise ValueError(f"{where}: a card is a dict with keys {FIELDS} or a 4-tuple, got {row!r}")
    time, typ, joy, cond = (v.strip() if isinstance(v, str) else v for v in vals)
    if time not in TIMES:
        raise ValueError(f"{where}: time must be one of {TIMES}, got {time!r}")
    if typ not in TYPES:
        raise ValueError(f"{where}: type must be one of {TYPES}, got {typ!r}")
    if cond not in CONDITIONS:
        raise ValueError(f"{where}: condition must be one of {CONDITIONS}, got {cond!r}")
    if isinstance(joy, bool):
        raise ValueError(f"{where}: joy must be an integer, got {joy!r}")
    try:
        j = int(joy)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where}: joy must be an integer, got {joy!r}") from None
    if isinstance(joy, float) and joy != j or not 0 <= j <= 100:
        raise ValueError(f"{where}: joy must be an integer from 0 to 100, got {joy!r}")
    return Card(TIMES.index(time), TYPES.index(typ), j, CONDITIONS.index(cond))


def _read_rows(spec: str | Path) -> list[Any]:
    path = Path(spec)
    if path.suffix.lower() == ".json":
        data = read_json(path, "deck file")
        if not isinstance(data, list):
            raise ValueError(f"{path}: a JSON deck is a list of cards")
        return data
    text = read_text(path, "deck file")
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        if reader.fieldnames is None or tuple(reader.fieldnames) != FIELDS:
            raise ValueError(f"{path}: a CSV deck has the header {','.join(FIELDS)}")
        return list(reader)
    except csv.Error as err:
        raise ValueError(f"deck file {path}: not a readable CSV ({err})") from None


def load_deck(spec: DeckSpec = None) -> Deck:
    """Read and validate a deck; ``None`` is the shipped default."""
    rows: Iterable[Any]
    if spec is None:
        spec = DEFAULT_DECK
    rows = _read_rows(spec) if isinstance(spec, (str, Path)) else spec
    cards = [_parse_row(r, f"card {i}") for i, r in enumerate(rows)]
    if not cards:
        raise ValueError("a deck needs cards")
    if len(cards) > MAX_CARDS:
        raise ValueError(f"a deck holds at most {MAX_CARDS} cards, got {len(cards)}")
    counts = Counter(cards)
    if len(counts) > MAX_KINDS:
        raise ValueError(f"a deck has at most {MAX_KINDS} distinct cards, got {len(counts)}")
    kinds = tuple(sorted(counts))
    return Deck(kinds, tuple(counts[k] for k in kinds))


def min_deck_size(num_players: int) -> int:
    """Cards needed so every deal can be made (T4).

    At a deal, hands and roads are empty and only victory piles are out of play:
    at most one card per player per trip, so ``2 * TRIPS * N`` before the last deal,
    which needs ``6 * N`` more.
    """
    return (ROUNDS - 1) * TRIPS * num_players + 6 * num_players


def check_deck_fits(deck: Deck, num_players: int) -> None:
    need = min_deck_size(num_players)
    if deck.size < need:
        raise ValueError(
            f"a deck for {num_players} players needs at least {need} cards, got {deck.size}"
        )
