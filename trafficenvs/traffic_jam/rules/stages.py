"""Compiled verbs of Traffic Jam's parallel env (``parallel.py``): one call per stage.

A stage of a trip (T3) is one simultaneous choice of every seat. The rules kernels
(``kernels.py``) take those choices one seat after another (C3: ``rec.cur`` is the seat
to choose, seat 0 first), so a stage is ``N`` kernel steps from ``rec.cur == 0``. These
verbs do the ``N`` steps, the legality test of all ``N`` choices and the ``N``
observations and masks each in a single compiled call, so a parallel step crosses from
Python into compiled code three times, whatever the number of players.

Legality and masks: a choice's legality reads only the chooser's own hand and the stage
(``kernels.is_legal`` / ``legal_mask`` read ``hand[rec.cur]``), so seat ``p``'s mask is
the kernels' mask with ``rec.cur`` set to ``p`` for the call and put back after it: the
same mask the AEC env shows ``p`` on its turn in that stage. Nothing else is read or
changed, so these calls leave the record as they found it (``stage_illegal``,
``observe_all``) or advance it exactly as the AEC env's ``N`` steps do (``stage_step``).

The callers (``parallel.py``) check every input first: ``actions`` is an int64 row of
``N`` entries in ``0..num_actions - 1``, the record is at a stage start (``cur == 0``),
the buffers have the game's shapes.
"""

from __future__ import annotations

from trafficenvs.core.jit import kernel
from trafficenvs.traffic_jam.rules.legality import is_legal, legal_mask
from trafficenvs.traffic_jam.rules.observe import observe
from trafficenvs.traffic_jam.rules.turns import is_over, step


@kernel
def stage_illegal(recs, cfg, actions, bad):
    """Mark in ``bad[p]`` whether seat ``p``'s choice ``actions[p]`` is illegal in this
    stage; returns how many are. The record is left unchanged."""
    r = recs[0]
    c = cfg[0]
    cur = r.cur
    n = 0
    for p in range(c.num_players):
        r.cur = p
        ok = is_legal(r, c, actions[p])
        bad[p] = not ok
        if not ok:
            n += 1
    r.cur = cur
    return n


@kernel
def stage_step(recs, cfg, actions, rewards):
    """Play the stage: seat ``p``'s (legal) choice ``actions[p]``, seats 0 to N-1 as the
    AEC env takes them, each counted as one move; the last reveals (and scores the trip
    or ends the game). ``rewards[j]`` gets seat ``j``'s reward summed over the N moves."""
    r = recs[0]
    c = cfg[0]
    n = c.num_players
    for j in range(n):
        rewards[j] = 0.0
    for p in range(n):
        step(r, c, actions[p])
        r.moves += 1
        for j in range(n):
            rewards[j] += r.reward[j]


@kernel
def observe_all(recs, cfg, obs, mask, live):
    """Every seat's observation ``obs[p]`` and its legal mask ``mask[p]`` for this stage
    (all zeros unless ``live``: an ended or cut-off game has nothing left to choose)."""
    r = recs[0]
    c = cfg[0]
    cur = r.cur
    live = live and not is_over(r, c)
    for p in range(c.num_players):
        observe(r, c, p, obs[p])
        row = mask[p]
        if live:
            r.cur = p
            legal_mask(r, c, row)
        else:
            for a in range(row.shape[0]):
                row[a] = 0
    r.cur = cur


__all__ = ["stage_illegal", "stage_step", "observe_all"]
