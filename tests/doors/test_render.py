"""The pictures a person meets: what each seat may see, labels clear of the map,
boards that fit a terminal, the bundled font and notebook display."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageFont

import trafficenvs
from trafficenvs.jakarta_traffic.render import render_compact as jk_compact
from trafficenvs.jamming_traffic.render import (
    box_clear_of_map,
    label_boxes,
    map_layout,
)
from trafficenvs.jamming_traffic.render import render_compact as jt_compact
from trafficenvs.jamming_traffic.rules.maps import SHIPPED
from trafficenvs.replay import Picture, env_png, picture
from trafficenvs.traffic_jam.render import render_image, render_text


def random_positions(game: str, num_players: int, moves: int, seed: int = 0, **options):
    """Records after every move of one random game (at most ``moves`` moves)."""
    env = trafficenvs.make(game, num_players=num_players, wrapped=False, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [env.record.copy()]
    for _ in range(moves):
        a = env.agent_selection
        if env.terminations[a] or env.truncations[a]:
            break
        env.step(int(rng.choice(np.flatnonzero(env.observe(a)["action_mask"]))))
        out.append(env.record.copy())
    return env.game, out


# --------------------------------------------------------------------------- Traffic Jam


def swapped_hands(game, rec):
    """A twin of ``rec`` where seats 1 and 2 trade one card of different kinds: only
    hidden information differs (the hand sizes stay the same)."""
    st = game.to_dict(rec)
    h1, h2 = st["hands"][1], st["hands"][2]
    for i, c1 in enumerate(h1):
        for j, c2 in enumerate(h2):
            if c1 != c2:
                h1[i], h2[j] = c2, c1
                return game.from_dict(st)[0]
    pytest.skip("no two different cards to swap")


def test_traffic_jam_other_hands_are_never_drawn():
    """T6: seat 0 (and a spectator) sees the same table whatever seats 1 and 2 hold."""
    game, recs = random_positions("traffic_jam", 4, 5, seed=2)
    rec = recs[2]
    twin = swapped_hands(game, rec)
    for seat in (0, None):
        assert render_text(game, rec, seat) == render_text(game, twin, seat)
        assert np.array_equal(render_image(game, rec, seat), render_image(game, twin, seat))
    assert render_text(game, rec, 1) != render_text(game, twin, 1)
    assert not np.array_equal(render_image(game, rec, 1), render_image(game, twin, 1))


def test_traffic_jam_spectator_sees_no_hand_and_viewer_sees_own_face_down_picks():
    game, recs = random_positions("traffic_jam", 3, 1, seed=0)
    rec = recs[1]  # player_0 has put its first card face down
    assert "Hand of" not in render_text(game, rec, None)
    mine = render_text(game, rec, 0)
    assert "Hand of player_0" in mine and "Face down by player_0: first [" in mine
    assert "Face down" not in render_text(game, rec, 1)  # player_0's pick is hidden from 1


@pytest.mark.parametrize("seat", [-5, 3, 17])
def test_traffic_jam_seat_out_of_range_is_refused(seat):
    game, recs = random_positions("traffic_jam", 3, 0)
    with pytest.raises(ValueError, match="seat"):
        render_text(game, recs[0], seat)
    with pytest.raises(ValueError, match="seat"):
        render_image(game, recs[0], seat)


@pytest.mark.parametrize("players", [2, 4, 6])
def test_traffic_jam_text_fits_80_columns_all_game(players):
    game, recs = random_positions("traffic_jam", players, 200, seed=players)
    assert recs[-1]["over"]
    for rec in recs:
        text = render_text(game, rec, 0)
        assert max(len(line) for line in text.splitlines()) <= 80
        assert len(text.splitlines()) <= 24
        for word in ("morning", "day", "night", "player_0*"):
            assert word in text


@pytest.mark.parametrize("players", [2, 4, 6])
def test_traffic_jam_picture_is_the_table(players):
    game, recs = random_positions("traffic_jam", players, 3 * players, seed=1)
    for seat in (None, 0):
        img = render_image(game, recs[-1], seat)
        assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
        assert 500 <= img.shape[0] <= 1200 and img.shape[1] == 1120
        # no half-empty frame: the bottom third holds drawing, not just felt
        bottom = img[2 * img.shape[0] // 3:]
        assert len(np.unique(bottom.reshape(-1, 3), axis=0)) > 10
    # the viewer's hand adds a row of cards
    assert render_image(game, recs[-1], 0).shape[0] > render_image(game, recs[-1], None).shape[0]


# --------------------------------------------------------------------------- Jamming Traffic


def _segments(lay, game):
    return [(lay.towns[a], lay.towns[b]) for a, b in game.map.roads]


@pytest.mark.parametrize("map_name", SHIPPED)
def test_jamming_labels_are_clear_of_roads_towns_and_each_other(map_name):
    game = trafficenvs.make_game("jamming_traffic", num_players=4, map=map_name)
    lay = map_layout(game.map, tuple(game.town_name(t) for t in range(game.map.num_towns)))
    towns, roads = label_boxes(game)
    segs = _segments(lay, game)
    boxes = towns + roads
    for b in boxes:
        assert box_clear_of_map(b, lay.towns, segs), b
        assert 0 <= b[0] and b[2] <= 900 and 0 <= b[1] and b[3] <= 720  # on the map area
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            overlap = not (a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1])
            assert not overlap, (a, b)


def test_jamming_label_check_catches_a_label_on_a_road():
    """The geometric check itself: a box across a road or on a town is refused."""
    game = trafficenvs.make_game("jamming_traffic", num_players=4)
    lay = map_layout(game.map, tuple(game.town_name(t) for t in range(game.map.num_towns)))
    (ax, ay), (bx, by) = lay.towns[game.map.roads[0][0]], lay.towns[game.map.roads[0][1]]
    mx, my = (ax + bx) / 2, (ay + by) / 2
    assert not box_clear_of_map((mx - 10, my - 5, mx + 10, my + 5), lay.towns, _segments(lay, game))
    tx, ty = lay.towns[3]
    assert not box_clear_of_map((tx + 5, ty - 5, tx + 30, ty + 5), lay.towns, [])


def test_jamming_picture_and_side_panel():
    game, recs = random_positions("jamming_traffic", 4, 40, seed=3)
    img = game.render_rgb(recs[-1], 0)
    assert img.shape == (720, 1200, 3)
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 10


@pytest.mark.parametrize("players,map_name", [(10, "default"), (4, "grid"), (3, "wheel")])
def test_jamming_compact_board_fits_80x24(players, map_name):
    game, recs = random_positions("jamming_traffic", players, 150, seed=1, map=map_name)
    for rec in recs[::10]:
        text = jt_compact(game, rec, 0)
        assert max(len(line) for line in text.splitlines()) <= 80
        assert len(text.splitlines()) <= 18


# --------------------------------------------------------------------------- Jakarta Traffic


@pytest.mark.parametrize("players", [2, 4])
def test_jakarta_compact_board_fits_80x24(players):
    game, recs = random_positions("jakarta_traffic", players, 150, seed=1)
    for rec in recs[::10]:
        text = jk_compact(game, rec, 0)
        assert max(len(line) for line in text.splitlines()) <= 80
        assert len(text.splitlines()) <= 24
        assert "r5" in text and "orders:" in text


# --------------------------------------------------------------------------- fonts, notebooks


@pytest.mark.parametrize("game", ["traffic_jam", "jamming_traffic", "jakarta_traffic"])
def test_renders_use_pillows_own_font_not_a_system_path(game, monkeypatch):
    """Every picture draws with Pillow's bundled font: with no font file found on the
    system (``truetype`` of any path fails), the renders still work."""
    from importlib import import_module

    mod = import_module(f"trafficenvs.{game}.render")
    assert isinstance(mod.font(12), ImageFont.FreeTypeFont)
    real = ImageFont.truetype

    def no_system_fonts(font=None, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        if isinstance(font, (str, bytes)) or hasattr(font, "__fspath__"):
            raise OSError(f"no system fonts here: {font!r}")
        return real(font, *args, **kwargs)

    monkeypatch.setattr(ImageFont, "truetype", no_system_fonts)
    mod.font.cache_clear()
    try:
        g, recs = random_positions(game, 3, 10)
        assert g.render_rgb(recs[-1], 0).ndim == 3
    finally:
        mod.font.cache_clear()


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return Image.open(io.BytesIO(data)).size


@pytest.mark.parametrize("game", ["traffic_jam", "jamming_traffic", "jakarta_traffic"])
def test_notebook_display_of_an_env_and_a_state(game):
    env = trafficenvs.make(game, num_players=3, render_seat=1)
    assert env_png(env) is None  # not reset yet: Jupyter falls back to the text repr
    assert env._repr_png_() is None
    env.reset(seed=4)
    data = env_png(env)
    assert env._repr_png_() == data  # the wrapped env passes the display through
    h, w, _ = env.unwrapped.game.render_rgb(env.unwrapped.record, 1).shape
    assert _png_size(data) == (w, h)
    pic = picture(env)
    assert pic.seat == 1 and _png_size(pic._repr_png_()) == (w, h)
    state = env.unwrapped.state_dict()
    from_state = Picture.from_state(env.unwrapped.game, state, seat=1)
    assert from_state._repr_png_() == pic._repr_png_()
    assert "Picture(" in repr(from_state)
    venv = trafficenvs.make_vec(game, num_envs=3, num_players=3)
    venv.reset(seed=1)
    assert _png_size(picture(venv, 2)._repr_png_())[0] == w
    with pytest.raises(ValueError, match="row"):
        picture(venv, 3)
    with pytest.raises(ValueError, match="seat"):
        Picture(env.unwrapped.game, env.unwrapped.record, seat=7)
