"""Observation and action layouts as data: named fields with offsets, lengths, meanings.

A game states its observation row and its action space once, as a :class:`Layout`
built for a configuration (player count, deck, map). Everything else reads that one
description:

- the kernels write by it: a game copies each field's offset into its configuration
  record (``cfg.ob_<field>``, see :meth:`Layout.offsets`), so ``observe`` writes
  ``out[cfg.ob_road + k]`` rather than a hand-computed ``4 * K + k``;
- agents read by name: ``game.obs_layout.field("moves_left").offset``,
  ``game.action_layout.field("swap").offset``, or ``layout.slice(obs, "hand")``;
- the rules page shows the table :meth:`Layout.markdown` makes, and a test fails
  when the page and the layout disagree (:func:`check_doc`, ``python -m
  trafficenvs.docs`` rewrites the tables).

A field may be a *block* repeated ``count`` times (one per town, per cell, per seat),
each repeat made of named :class:`Part` s; ``layout.at("cells", x, "charging")`` is
the offset of one entry. Part offsets inside a block do not depend on the
configuration, so kernels use them as module constants (:func:`part_offsets`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Part:
    """One named run of entries inside each repeat of a block field."""

    name: str
    length: int
    meaning: str
    #: the largest value an entry takes (1: a flag or one-hot entry); the
    #: observation space's upper bound, exact, so ``observation_space.contains`` holds
    high: int = 1
    #: a bound per entry when they differ (e.g. per card kind, its copies in the deck);
    #: ``high`` is then their largest
    bounds: tuple[int, ...] = ()

    def highs(self) -> np.ndarray:
        """The upper bound of each of the part's ``length`` entries."""
        return _highs(self.length, self.high, self.bounds, self.name)


def _highs(length: int, high: int, bounds: tuple[int, ...], name: str) -> np.ndarray:
    if not bounds:
        return np.full(length, high, np.int64)
    if len(bounds) != length:
        raise ValueError(f"{name}: {len(bounds)} bounds for {length} entries")
    return np.asarray(bounds, np.int64)


def _range_text(high: int, bounds: tuple[int, ...]) -> str:
    """``0-4``, or ``0-(2..4)`` when the bound differs from entry to entry."""
    if not bounds or min(bounds) == max(bounds):
        return f"0-{max(bounds) if bounds else high}"
    return f"0-({min(bounds)}..{max(bounds)})"


def bounded(cls: type, name: str, bounds: Sequence[int], meaning: str, **kw: object):
    """A :class:`Part` or :class:`Field` with a bound per entry (``high`` their largest)."""
    b = tuple(int(x) for x in bounds)
    return cls(name, len(b), meaning, high=max(b, default=0), bounds=b, **kw)


@dataclass(frozen=True)
class Field:
    """A named run of ``length`` entries of a row, starting at ``offset``.

    ``size`` writes the length as the rules page states it in terms of the
    configuration (``"K"``, ``"2 N"``); ``count`` > 1 with ``parts`` makes a block
    of ``count`` repeats of ``stride`` entries each. ``high`` is the largest value
    an entry takes (a block's entries take their part's ``high``); entries are
    integers from 0 to ``high`` (observations are ``uint8`` rows).
    """

    name: str
    length: int
    meaning: str
    size: str = ""
    count: int = 1
    parts: tuple[Part, ...] = ()
    offset: int = -1
    high: int = 1
    #: a bound per entry when they differ (see :attr:`Part.bounds`)
    bounds: tuple[int, ...] = ()

    def highs(self) -> np.ndarray:
        """The upper bound of each of the field's entries (``length`` values)."""
        if not self.parts:
            return _highs(self.length, self.high, self.bounds, self.name)
        return np.tile(np.concatenate([p.highs() for p in self.parts]), self.count)

    def range_text(self) -> str:
        """``0-1``, ``0-26``, ``0-(2..4)`` or ``0-1 / 0-6`` per part, for the rules page."""
        if not self.parts:
            return _range_text(self.high, self.bounds)
        return " / ".join(_range_text(p.high, p.bounds) for p in self.parts)

    @property
    def stride(self) -> int:
        """Entries per repeat of a block (``length`` for a plain field)."""
        return self.length // self.count

    @property
    def stop(self) -> int:
        return self.offset + self.length

    @property
    def slice(self) -> slice:
        return slice(self.offset, self.offset + self.length)


def part_offsets(parts: Sequence[Part]) -> dict[str, int]:
    """Offset of each part inside one repeat of a block."""
    out: dict[str, int] = {}
    o = 0
    for p in parts:
        out[p.name] = o
        o += p.length
    return out


def block(name: str, count: int, parts: Sequence[Part], meaning: str, size: str = "") -> Field:
    """A field of ``count`` repeats of ``parts`` (e.g. one per cell of the board)."""
    parts = tuple(parts)
    stride = sum(p.length for p in parts)
    return Field(name, count * stride, meaning, size=size, count=count, parts=parts)


class Layout:
    """The fields of a row (an observation, or the action space), in order.

    Offsets follow from the order and the lengths: the first field starts at 0 and
    each next one where the last stopped, so a layout cannot overlap or leave gaps.
    """

    def __init__(self, title: str, fields: Sequence[Field], ranges: bool = False):
        self.title = title
        #: an observation layout: its entries are bounded integers (uint8), and the
        #: rules page's table shows each field's range
        self.ranges = ranges
        placed: list[Field] = []
        o = 0
        for f in fields:
            if f.length < 0 or (f.count > 1 and f.length % f.count):
                raise ValueError(f"{title}: field {f.name!r} has a bad length {f.length}")
            placed.append(replace(f, offset=o))
            o += f.length
        names = [f.name for f in placed]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"{title}: fields {dup} named twice")
        self.fields: tuple[Field, ...] = tuple(placed)
        self._by_name = {f.name: f for f in placed}
        self.size = o
        if ranges:
            bad = [f.name for f in placed
                   if f.length and not 0 <= f.highs().min() <= f.highs().max() <= 255]
            if bad:
                raise ValueError(f"{title}: fields {bad} have a bound outside 0..255 (uint8)")

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> Field:
        """The field called ``name`` (KeyError naming the known fields otherwise)."""
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"{self.title} has no field {name!r}; fields: {self.names()}") from None

    def at(self, name: str, index: int = 0, part: str | None = None) -> int:
        """Offset of entry ``index`` of a field, or of ``part`` in repeat ``index`` of a
        block."""
        f = self.field(name)
        if part is None:
            if not 0 <= index < f.length:
                raise IndexError(f"{name}[{index}] is outside its {f.length} entries")
            return f.offset + index
        if not 0 <= index < f.count:
            raise IndexError(f"{name} has {f.count} repeats, not {index + 1}")
        offs = part_offsets(f.parts)
        if part not in offs:
            raise KeyError(f"{name} has no part {part!r}; parts: {list(offs)}")
        return f.offset + index * f.stride + offs[part]

    def high(self) -> np.ndarray:
        """The upper bound of every entry of a row (``size`` values; the lower bound is 0).

        Exact by construction: each field states the largest value its kernel writes,
        and the bounds tests check random games against it.
        """
        if not self.fields:
            return np.zeros(0, np.int64)
        return np.concatenate([f.highs() for f in self.fields])

    def slice(self, row: np.ndarray, name: str) -> np.ndarray:
        """The entries of field ``name`` in ``row`` (or in every row of a batch)."""
        return np.asarray(row)[..., self.field(name).slice]

    def offsets(self, prefix: str = "ob_") -> dict[str, int]:
        """``{prefix + name: offset}``: the configuration-record fields a kernel reads."""
        return {prefix + f.name: f.offset for f in self.fields}

    def markdown(self) -> str:
        """The layout as the rules page's table (one row per field, parts listed)."""
        if self.ranges:
            lines = ["| field | offset | length | range | meaning |",
                     "| --- | ---: | --- | --- | --- |"]
        else:
            lines = ["| field | offset | length | meaning |", "| --- | ---: | --- | --- |"]
        for f in self.fields:
            size = f"{f.length}" + (f" ({f.size})" if f.size else "")
            meaning = f.meaning
            if f.parts:
                parts = "; ".join(
                    f"+{o} `{p.name}`" + (f" ({p.length})" if p.length > 1 else "")
                    + f": {p.meaning}"
                    for p, o in zip(f.parts, part_offsets(f.parts).values())
                )
                meaning += f". Each of the {f.count} repeats ({f.stride} entries): {parts}"
            rng = f" {f.range_text()} |" if self.ranges else ""
            lines.append(f"| `{f.name}` | {f.offset} | {size} |{rng} {meaning} |")
        return "\n".join(lines)


_MARK = "<!-- layout:{key} -->"
_END = "<!-- /layout -->"


def doc_section(text: str, key: str) -> str | None:
    """The table between ``<!-- layout:key -->`` and ``<!-- /layout -->`` in ``text``."""
    m = re.search(re.escape(_MARK.format(key=key)) + r"\n(.*?)" + re.escape(_END), text,
                  re.DOTALL)
    return m.group(1).rstrip("\n") if m else None


def replace_doc_section(text: str, key: str, table: str) -> str:
    """``text`` with the ``key`` table replaced by ``table`` (ValueError if absent)."""
    start = _MARK.format(key=key)
    if doc_section(text, key) is None:
        raise ValueError(f"no {start} ... {_END} section")
    pattern = re.escape(start) + r"\n.*?" + re.escape(_END)
    return re.sub(pattern, lambda _m: f"{start}\n{table}\n{_END}", text, count=1, flags=re.DOTALL)


def check_doc(layout: Layout, path: Path | str, key: str) -> None:
    """AssertionError unless the page at ``path`` shows ``layout``'s table under ``key``."""
    text = Path(path).read_text()
    got = doc_section(text, key)
    assert got is not None, f"{path} has no {_MARK.format(key=key)} section"
    want = layout.markdown()
    assert got.strip() == want.strip(), (
        f"{path}: the {key} table differs from the layout; run `python -m trafficenvs.docs`"
    )
