"""Traffic Jam's v1 observation: exact bounds, what a seat sees and what it
cannot, and the derived features against plain-Python references.

Ruling T6 (every victory pile, the roads, the discard pile, the deck size, the stage,
trip and round are public) and C4 (me first). Positions are state dicts: twins differ
in one thing only, which the seat at the table either sees (the observations differ)
or cannot see (they are equal).
"""

from __future__ import annotations

import copy
import itertools
from collections import Counter

import numpy as np
import pytest

from tests.traffic_jam.positions import cards, pair, play, position
from trafficenvs import testing
from trafficenvs.core.statedict import StateDictError
from trafficenvs.registry import make_game, make_vec

ENV = "traffic_jam-v1"
TIMES = ("morning", "day", "night")


def _tiny_deck():
    """The fewest cards 3 players need (30), 4 kinds, no cabriolet or van: reshuffles
    every round."""
    return ([("night", "motorcycle", 2, "either")] * 10 + [("night", "bus", 1, "free")] * 10
            + [("day", "truck", 4, "free")] * 5 + [("morning", "ice cream truck", 3, "jam")] * 5)


def _rich_deck():
    """The largest deck allowed: 128 cards of 32 kinds (4 each), every time and type."""
    types = ("van", "cabriolet", "buggy", "truck", "bus", "motorcycle", "hot-air balloon",
             "ice cream truck")
    conds = {"ice cream truck": "jam", "motorcycle": "either", "hot-air balloon": "either"}
    kinds = [(t, ty, 2 + i, conds.get(ty, "free")) for i, t in enumerate(TIMES) for ty in types]
    kinds += [("day", ty, 9, conds.get(ty, "free")) for ty in types]
    return [k for k in kinds for _ in range(4)]


def _joyful_deck():
    """Cards worth 90-100 joy: the best six pass 255, so the joy entry is capped."""
    return [("day", "cabriolet", 100, "free")] * 20 + [("night", "bus", 90, "free")] * 20 + [
        ("morning", "motorcycle", 95, "either")] * 20


BOUND_CASES = [
    {"num_players": 2},
    {"num_players": 3, "shaping": True},
    {"num_players": 4},
    {"num_players": 5},
    {"num_players": 6, "shaping": True},
    {"num_players": 3, "deck": _tiny_deck()},
    {"num_players": 6, "deck": _rich_deck()},
    {"num_players": 2, "deck": _joyful_deck()},
    {"num_players": 6, "deck": _joyful_deck()},
]
BOUND_IDS = [f"{o['num_players']}p" + ("-shaping" if o.get("shaping") else "")
             + (f"-deck{len(o['deck'])}" if "deck" in o else "") for o in BOUND_CASES]


def one_hot_groups(game):
    """(offset, length) of every run of entries of which at most one is set."""
    lay, K, N = game.obs_layout, game.num_kinds, game.num_players
    groups = [(lay.field(f).offset, lay.field(f).length) for f in ("my_pick", "my_car")]
    for j in range(N):
        for part in ("first", "last_first", "last_car", "last_surprise"):
            groups.append((lay.at("seats", j, part), K))
    return groups


# --------------------------------------------------------------------------- bounds


@pytest.mark.parametrize("options", BOUND_CASES, ids=BOUND_IDS)
def test_every_view_of_random_games_lies_within_its_exact_bounds(options):
    """Every seat's view, the mover's and the final ones, and the AEC space's contains;
    flags and one-hot entries never above 1, and one-hot runs really one-hot."""
    game = make_game(ENV, **options)
    seen = testing.check_observation_bounds(ENV, seeds=range(3), num_envs=64, steps=400,
                                            every=2, aec_games=2, **options)
    high = game.obs_high.astype(np.int64)
    assert (seen <= high).all()
    lay = game.obs_layout
    flags = ["my_pick", "my_car", "last_jam", "stage", "trip", "round"]
    for name in flags:
        assert (high[lay.field(name).slice] == 1).all(), name
    for j in range(game.num_players):
        for part in ("picked", "scored"):
            assert high[lay.at("seats", j, part)] == 1
    for o, n in one_hot_groups(game):
        assert (high[o:o + n] == 1).all()
    # one-hot runs and the stage / trip / round one-hots, over a batch of random views
    venv = make_vec(ENV, num_envs=64, **options)
    out = venv.reset(seed=5)
    rng = np.random.default_rng(5)
    for t in range(12 * game.num_players):
        for j in range(game.num_players):
            obs = venv.observe(np.full(64, j))
            for o, n in one_hot_groups(game):
                assert obs[:, o:o + n].sum(1).max() <= 1, (t, o)
            for name in ("stage", "trip", "round"):
                np.testing.assert_array_equal(lay.slice(obs, name).sum(1), 1)
        acts = [rng.choice(np.flatnonzero(m)) for m in out.action_mask]
        out = venv.step(np.array(acts))
    # the seen maxima reach the bounds of the counts random play reaches every game
    for name in ("deck_left", "horizon_left"):
        f = lay.field(name)
        assert seen[f.slice].max() == f.high, name
    unseen = lay.field("unseen")
    np.testing.assert_array_equal(seen[unseen.slice], high[unseen.slice])


def test_bounds_follow_the_deck():
    """The bounds are the deck's: copies per kind (at most 6 in a hand or a victory
    pile), the best six cards' joy, the deck less the first deal."""
    g = make_game(ENV, num_players=4)
    lay, K = g.obs_layout, g.num_kinds
    high = g.obs_high.astype(np.int64)
    counts = np.array(g.deck.counts)
    np.testing.assert_array_equal(high[lay.field("hand").slice], np.minimum(counts, 6))
    np.testing.assert_array_equal(high[lay.field("discard").slice], counts)
    np.testing.assert_array_equal(high[lay.field("unseen").slice], counts)
    o = lay.at("seats", 2, "victory")
    np.testing.assert_array_equal(high[o:o + K], np.minimum(counts, 6))
    assert high[lay.at("seats", 1, "joy")] == 4 * 5 + 2 * 4  # the four day vans, two 4s
    assert high[lay.field("deck_left").offset] == 72 - 24
    assert high[lay.field("road_size").slice].tolist() == [7, 8, 7]
    joyful = make_game(ENV, num_players=2, deck=_joyful_deck())
    assert joyful.obs_high[joyful.obs_layout.at("seats", 0, "joy")] == 255


def test_the_bounds_of_scores_and_counts_are_reached(g4):
    """Exact, not loose: a game over with the best six cards in one victory pile, every
    day van in the discard pile, four day vans in a hand."""
    lay, K = g4.obs_layout, g4.num_kinds
    high = g4.obs_high.astype(np.int64)
    best = cards(g4, "day van, day van, day van, day van, morning van, morning van")
    st = position(g4, round=2, trip=1, over=True, hands=[[], [], [], []],
                  victory=[[], best, [], []])
    venv, out = _vec(g4, st)
    o = venv.observe(np.array([1]))[0]
    assert o[lay.at("seats", 0, "joy")] == high[lay.at("seats", 0, "joy")] == 28
    assert o[lay.at("seats", 0, "cards")] == 6
    vic = lay.at("seats", 0, "victory")
    van = g4.deck.index(cards(g4, "day van")[0])
    assert o[vic + van] == high[vic + van] == 4
    st = position(g4, discard=cards(g4, "day van, day van, day van, day van"),
                  hands=[None] * 4)
    venv, out = _vec(g4, st)
    o = out.observation[0]
    assert o[lay.field("discard").offset + van] == 4 == high[lay.field("discard").offset + van]
    st = position(g4, hands=[cards(g4, "day van, day van, day van, day van") + [...],
                             None, None, None])
    venv, out = _vec(g4, st)
    assert out.observation[0][lay.field("hand").offset + van] == 4
    assert lay.field("hand").highs()[van] == 4 and K == 24


def test_road_size_bounds_are_reached_with_each_kind_added(g4):
    """For every kind, the stage-1 cards (one per seat) that make its road, with one more
    card of that kind, as big as can be: the observation shows exactly the bound."""
    lay = g4.obs_layout
    hi_with = lay.field("size_with").highs()
    hi_size = lay.field("road_size").highs()
    kinds = g4.deck.kinds
    for t in range(3):
        own = [k for k in range(g4.num_kinds) if kinds[k].time == t]
        best = {}
        for combo in itertools.combinations_with_replacement(own, 4):
            c = Counter(combo)
            if any(c[k] > g4.deck.counts[k] for k in c):
                continue
            base = ref_size([kinds[k].type for k in combo])
            best.setdefault("road", (base, combo))
            if base > best["road"][0]:
                best["road"] = (base, combo)
            for k in own:
                s = ref_size([kinds[x].type for x in combo] + [kinds[k].type])
                if k not in best or s > best[k][0]:
                    best[k] = (s, combo)
        assert best["road"][0] == hi_size[t]
        for k in own:
            size, combo = best[k]
            assert size == hi_with[k], (kinds[k].name, size, hi_with[k])
            firsts = [kinds[x].name for x in combo]
            st = position(g4, stage=1, roads=firsts, firsts=firsts, hands=[None] * 4)
            _, out = _vec(g4, st)
            assert out.observation[0][lay.field("size_with").offset + k] == size


def test_joy_past_255_is_shown_capped_with_the_pile_exact():
    g = make_game(ENV, num_players=2, deck=_joyful_deck())
    lay = g.obs_layout
    pile = cards(g, "day cab, day cab, day cab")  # 300 joy
    st = position(g, round=1, trip=1, victory=[pile, []], hands=[None, None])
    _, out = _vec(g, st)
    o = out.observation[0]
    assert o[lay.at("seats", 0, "joy")] == 255
    assert o[lay.at("seats", 0, "victory") + g.deck.index(pile[0])] == 3


def test_horizon_left_counts_down_the_move_limit():
    venv = make_vec(ENV, num_envs=1, num_players=2, max_cycles=4)  # 8 moves in all
    f = venv.game.obs_layout.field("horizon_left").offset
    out = venv.reset(seed=0)
    seen = [int(out.observation[0][f])]
    for _ in range(7):
        out = venv.step(np.array([np.flatnonzero(out.action_mask[0])[0]]))
        seen.append(int(out.observation[0][f]))
    assert seen == [255, 224, 192, 160, 128, 96, 64, 32]
    out = venv.step(np.array([np.flatnonzero(out.action_mask[0])[0]]))
    assert out.truncated[0] and out.final_observation[0][f] == 0


# --------------------------------------------------------------------------- twins


@pytest.fixture
def g4():
    return make_game(ENV, num_players=4)


def _vec(game, state):
    """A one-game vectorised env of ``game``'s configuration set to ``state``."""
    venv = make_vec(ENV, num_envs=1, num_players=game.num_players, deck=game_deck(game))
    venv.reset(seed=0)
    venv.load_state_dict(0, state)
    return venv, venv._buf  # noqa: SLF001


def game_deck(game):
    """``game``'s deck as rows (to make an env of the same configuration)."""
    from trafficenvs.traffic_jam.rules.layout import CONDITIONS, TYPES

    return [(TIMES[c.time], TYPES[c.type], c.joy, CONDITIONS[c.condition])
            for c, n in zip(game.deck.kinds, game.deck.counts) for _ in range(n)]


def views(game, state) -> list[bytes]:
    """Every seat's observation of the position (as bytes, to compare)."""
    venv, _ = _vec(game, state)
    return [venv.observe(np.array([s]))[0].tobytes() for s in range(game.num_players)]


def mid_trip(seed: int = 3, moves: int = 16 + 4 + 2):
    """A 4-player state dict from random play: round 2, trip 1, stage 2, seat 2 to move
    (seats 0 and 1 have chosen their pairs); the last trip's reveals are on record."""
    venv = make_vec(ENV, num_envs=1, num_players=4)
    out = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        out = venv.step(np.array([rng.choice(np.flatnonzero(out.action_mask[0]))]))
    return venv.state_dict(0)


def _differing_seats(names):
    """Two seats whose cards in ``names`` differ (the test needs one such pair)."""
    for a, b in itertools.combinations(range(len(names)), 2):
        if names[a] != names[b]:
            return a, b
    raise AssertionError(f"all the same: {names}")


def test_twins_differing_in_the_others_hands_look_the_same_to_me(g4):
    st = mid_trip()
    twin = copy.deepcopy(st)
    # swap one card between player_3's hand and player_0's, and one with the deck
    h0, h3 = twin["hands"][0], twin["hands"][3]
    i = next(i for i, c in enumerate(h3) if c != h0[0])
    h0[0], h3[i] = h3[i], h0[0]
    j = next(j for j, c in enumerate(twin["deck"]) if c != h3[0])
    h3[0], twin["deck"][j] = twin["deck"][j], h3[0]
    a, b = views(g4, st), views(g4, twin)
    assert a[1] == b[1] and a[2] == b[2]  # neither hand is theirs
    assert a[0] != b[0] and a[3] != b[3]  # but their own hands changed


def test_twins_differing_in_a_face_down_pair_look_the_same_to_the_others(g4):
    st = mid_trip()
    twin = copy.deepcopy(st)
    pend, hand = twin["pending"][0], twin["hands"][0]
    i = next(i for i, c in enumerate(hand) if c != pend["car"])
    pend["car"], hand[i] = hand[i], pend["car"]
    a, b = views(g4, st), views(g4, twin)
    assert a[1:] == b[1:]
    assert a[0] != b[0]  # player_0 knows its own car


def test_twins_differing_in_a_face_down_first_card_look_the_same_to_the_others(g4):
    """Stage 1: no seat sees who will reveal what before the reveal."""
    venv = make_vec(ENV, num_envs=1, num_players=4)
    out = venv.reset(seed=8)
    hand = np.flatnonzero(out.action_mask[0])
    seen = {s: set() for s in range(4)}
    for a in hand:
        v = make_vec(ENV, num_envs=1, num_players=4)
        v.reset(seed=8)
        v.step(np.array([a]))
        for s in range(4):
            seen[s].add(v.observe(np.array([s]))[0].tobytes())
    assert len(seen[1]) == len(seen[2]) == len(seen[3]) == 1
    assert len(seen[0]) == len(hand)  # its own pick and hand


def test_twins_differing_in_deck_order_or_generator_look_the_same(g4):
    st = mid_trip()
    twin = copy.deepcopy(st)
    twin["deck"] = twin["deck"][::-1]
    twin["rng"] = {"key": 12345, "counter": 99}
    assert twin["deck"] != st["deck"]
    assert views(g4, st) == views(g4, twin)


def test_who_revealed_which_stage_one_card_is_seen(g4):
    """Same cards on the roads, revealed by other seats: every view differs."""
    st = mid_trip()
    a, b = _differing_seats(st["firsts"])
    twin = copy.deepcopy(st)
    twin["firsts"][a], twin["firsts"][b] = st["firsts"][b], st["firsts"][a]
    for x, y in zip(views(g4, st), views(g4, twin)):
        assert x != y


@pytest.mark.parametrize("key", ["firsts", "surprises", "cars"])
def test_who_played_what_last_trip_is_seen(g4, key):
    """The last trip's reveals per seat (stage-1 card, car, surprise) are public. Cars
    are swapped between two seats whose cars both went to the discard pile."""
    st = mid_trip()
    last = st["last_trip"]
    seats = range(4) if key != "cars" else [p for p in range(4) if not last["scored"][p]]
    names = [last[key][p] for p in seats]
    a, b = _differing_seats(names)
    a, b = list(seats)[a], list(seats)[b]
    twin = copy.deepcopy(st)
    twin["last_trip"][key][a], twin["last_trip"][key][b] = last[key][b], last[key][a]
    for x, y in zip(views(g4, st), views(g4, twin)):
        assert x != y


def test_each_victory_pile_is_seen_by_kind(g4):
    """Two piles of equal joy and size but other kinds: v0 showed only the totals."""
    a = cards(g4, "morning cab")  # 3 joy
    b = cards(g4, "morning buggy")  # 3 joy
    st = position(g4, round=1, trip=0, victory=[[], a, b, []], hands=[None] * 4)
    twin = position(g4, round=1, trip=0, victory=[[], b, a, []], deck=st["deck"],
                    hands=st["hands"])
    for x, y in zip(views(g4, st), views(g4, twin)):
        assert x != y


def test_my_face_down_card_is_seen_by_me_only(g4):
    st = mid_trip()
    assert st["to_move"] == 2
    venv, _ = _vec(g4, st)
    lay = g4.obs_layout
    o0 = venv.observe(np.array([0]))[0]
    car = g4.deck.index(st["pending"][0]["car"])
    sur = g4.deck.index(st["pending"][0]["surprise"])
    assert o0[lay.field("my_car").offset + car] == 1 and lay.slice(o0, "my_car").sum() == 1
    assert o0[lay.field("my_pick").offset + sur] == 1 and lay.slice(o0, "my_pick").sum() == 1
    o2 = venv.observe(np.array([2]))[0]  # the seat to move has no face-down card yet
    assert lay.slice(o2, "my_car").sum() == lay.slice(o2, "my_pick").sum() == 0
    # seat 0 (relative seat 2 for player_2) has chosen, seat 3 not
    assert o2[lay.at("seats", 2, "picked")] == 1 and o2[lay.at("seats", 1, "picked")] == 0


def test_the_stage_one_reveal_shows_each_seats_card_in_its_part(g4):
    """After stage 1, every seat's view shows each seat's card (relative seats)."""
    st = mid_trip(seed=4, moves=16 + 4)  # round 2, trip 1, stage 2, nobody chose yet
    venv, out = _vec(g4, st)
    lay = g4.obs_layout
    for me in range(4):
        o = venv.observe(np.array([me]))[0]
        for j in range(4):
            k = g4.deck.index(st["firsts"][(me + j) % 4])
            part = lay.at("seats", j, "first")
            assert o[part + k] == 1 and o[part:part + g4.num_kinds].sum() == 1


def test_stage_two_reveal_lands_in_the_last_trip_parts(g4):
    """After the last pair: the last trip's cards per seat, who scored, which roads
    jammed (the rulebook's example: night jammed; player_1's ice cream truck failed)."""
    from tests.traffic_jam.test_rules import rulebook_example

    st = rulebook_example(g4)
    venv, _ = _vec(g4, st)
    out = play(venv, pair(g4, *cards(g4, "night moto, night van")))
    s = venv.state_dict(0)
    o = out.observation[0]
    lay, K = g4.obs_layout, g4.num_kinds
    assert lay.slice(o, "last_jam").tolist() == [0, 0, 1]
    for j in range(4):
        for part, key in (("last_first", "firsts"), ("last_car", "cars"),
                          ("last_surprise", "surprises")):
            k = g4.deck.index(s["last_trip"][key][j])
            at = lay.at("seats", j, part)
            assert o[at + k] == 1 and o[at:at + K].sum() == 1
        assert o[lay.at("seats", j, "scored")] == s["last_trip"]["scored"][j]
    assert s["last_trip"]["firsts"] == st["firsts"]
    assert s["last_trip"]["surprises"] == [p["surprise"] for p in st["pending"][:3]] + [
        cards(g4, "night van")[0]]


# --------------------------------------------------------------------------- state dicts


def test_state_dicts_carry_who_played_what(g4):
    st = mid_trip()
    assert len(st["firsts"]) == 4 and all(st["firsts"])
    assert sorted(st["firsts"]) == sorted(st["roads"])
    assert set(st["last_trip"]) == {"jam", "cars", "scored", "firsts", "surprises"}
    venv, _ = _vec(g4, st)
    assert venv.state_dict(0) == st


def test_v0_state_dicts_without_who_revealed_what_in_stage_two_are_refused(g4):
    st = mid_trip()
    del st["firsts"]
    with pytest.raises(StateDictError, match="firsts: in stage 1 give the stage-1 card"):
        _vec(g4, st)


def test_v0_state_dicts_load_in_stage_one_and_without_last_trip_reveals(g4):
    """Stage 1 needs no ``firsts`` (nothing is revealed); a last trip without
    ``firsts`` / ``surprises`` loads them as unknown: no card shown."""
    st = mid_trip(moves=16)  # round 2, trip 1, stage 1
    assert st["stage"] == 0
    del st["firsts"]
    for key in ("firsts", "surprises"):
        del st["last_trip"][key]
    venv, out = _vec(g4, st)
    s = venv.state_dict(0)
    assert s["firsts"] == [None] * 4
    assert s["last_trip"]["firsts"] == s["last_trip"]["surprises"] == [None] * 4
    lay, K = g4.obs_layout, g4.num_kinds
    o = out.observation[0]
    for j in range(4):
        for part in ("last_first", "last_surprise"):
            at = lay.at("seats", j, part)
            assert o[at:at + K].sum() == 0
        at = lay.at("seats", j, "last_car")
        assert o[at:at + K].sum() == 1


def test_state_dicts_refuse_reveals_that_are_not_the_roads(g4):
    st = mid_trip()
    bad = copy.deepcopy(st)
    bad["firsts"][0] = next(c for c in st["hands"][2] if c not in st["roads"])
    with pytest.raises(StateDictError, match="firsts"):
        _vec(g4, bad)
    early = mid_trip(moves=16)
    early["firsts"][0] = early["hands"][0][0]
    with pytest.raises(StateDictError, match="firsts"):
        _vec(g4, early)


# --------------------------------------------------------------------------- derived


def ref_size(types) -> int:
    """The rulebook's size of a road (plain Python, from the card descriptions): van 2;
    cabriolet, buggy, ice cream truck 1; first truck 1, each further one 2; all buses 1
    together; a lone motorcycle 0, several 1 each; a balloon 0."""
    c = Counter(types)
    van, cab, buggy, truck, bus, moto, balloon, ice = range(8)
    size = 2 * c[van] + c[cab] + c[buggy] + c[ice]
    size += (1 + 2 * (c[truck] - 1)) if c[truck] else 0
    size += 1 if c[bus] else 0
    size += c[moto] if c[moto] >= 2 else 0
    return size + 0 * c[balloon]


def reference_features(game, st, seat):
    """road_size, size_with, unseen of ``seat``'s view, from the state dict alone."""
    kinds = game.deck.kinds
    K = game.num_kinds
    road = [kinds[game.deck.index(c)] for c in st["roads"]]
    sizes = [ref_size([c.type for c in road if c.time == t]) for t in range(3)]
    with_k = [ref_size([c.type for c in road if c.time == k.time] + [k.type]) for k in kinds]
    seen = Counter(st["hands"][seat]) + Counter(st["roads"]) + Counter(st["discard"])
    for pile in st["victory"]:
        seen += Counter(pile)
    seen += Counter(v for key, v in st["pending"][seat].items() if v is not None)
    unseen = [game.deck.counts[k] - seen[kinds[k].name] for k in range(K)]
    return sizes, with_k, unseen


@pytest.mark.parametrize("options", [{"num_players": 4}, {"num_players": 6},
                                     {"num_players": 3, "deck": _tiny_deck()},
                                     {"num_players": 5, "deck": _rich_deck()}],
                         ids=["4p", "6p", "3p-tiny", "5p-rich"])
def test_derived_features_match_a_plain_python_reference(options):
    """Road sizes, sizes with each kind added and unseen cards, on every seat's view of
    thousands of random positions (both stages, every trip, games restarting)."""
    game = make_game(ENV, **options)
    lay = game.obs_layout
    B, N = 24, game.num_players
    venv = make_vec(ENV, num_envs=B, **options)
    out = venv.reset(seed=1)
    rng = np.random.default_rng(1)
    checked = 0
    stages = set()
    for t in range(30 * N):
        if t % 3 == 0:
            for seat in range(N):
                obs = venv.observe(np.full(B, seat))
                for i in range(B):
                    st = venv.state_dict(i)
                    sizes, with_k, unseen = reference_features(game, st, seat)
                    assert lay.slice(obs[i], "road_size").tolist() == sizes, (t, i, seat)
                    assert lay.slice(obs[i], "size_with").tolist() == with_k, (t, i, seat)
                    assert lay.slice(obs[i], "unseen").tolist() == unseen, (t, i, seat)
                    stages.add((st["trip"], st["stage"]))
                    checked += 1
        acts = [rng.choice(np.flatnonzero(m)) for m in out.action_mask]
        out = venv.step(np.array(acts))
    assert checked >= 2000 and stages == {(0, 0), (0, 1), (1, 0), (1, 1)}


def test_unseen_cards_never_count_what_is_hidden_from_me(g4):
    """The deck, the others' hands and face-down cards: moving a card among them leaves
    my unseen counts as they were (the twins above, read on this one field)."""
    st = mid_trip()
    twin = copy.deepcopy(st)
    twin["hands"][3][0], twin["deck"][0] = st["deck"][0], st["hands"][3][0]
    lay = g4.obs_layout
    for seat in (1, 2):
        a = _vec(g4, st)[0].observe(np.array([seat]))[0]
        b = _vec(g4, twin)[0].observe(np.array([seat]))[0]
        np.testing.assert_array_equal(lay.slice(a, "unseen"), lay.slice(b, "unseen"))


def test_the_greedy_player_reads_the_roads_from_the_stage_one_reveals(g4):
    """The day road is jammed by the stage-1 cards (van van van truck: 7 > 4), so the
    greedy player leaves its 5-joy day van and rides the 4-joy morning van, with its
    cheapest card (the 1-joy night bus) as the surprise, away from the morning road."""
    from trafficenvs.agents import make_greedy

    hand = cards(g4, "day van, morning van, night bus, night buggy, night cab")
    st = position(g4, stage=1, roads=cards(g4, "day van, day van, day van, day truck"),
                  hands=[hand, None, None, None])
    venv, out = _vec(g4, st)
    acts = make_greedy(g4).act(out.observation, out.action_mask, out.current_player)
    assert g4.action_name(venv.records[0], int(acts[0])) == (
        "car on morning van (4), surprise night bus (1)")
