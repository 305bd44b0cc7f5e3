"""Jamming Traffic renders: text (ansi) and a Pillow picture of the map (rgb_array).

Both read a record and never change it. Nothing is hidden in this game, so ``seat``
only marks whose view it is ("you").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from trafficenvs.jamming_traffic.rules.layout import (
    MOVE,
    ONE_WAY,
    OVER,
    PLACE,
    ROUNDABOUT,
    SETUP,
    STOP,
)

if TYPE_CHECKING:
    from trafficenvs.jamming_traffic.game import JammingTrafficGame
    from trafficenvs.jamming_traffic.rules.maps import Map

PLAYER_RGB = [
    (220, 40, 40), (30, 110, 230), (30, 160, 60), (240, 160, 0), (150, 60, 200),
    (0, 170, 170), (230, 90, 170), (120, 80, 40), (90, 90, 90), (190, 190, 0),
]
NEUTRAL_RGB = (205, 205, 205)
PHASE_TEXT = {
    SETUP: "set-up: choose the road your car starts on",
    PLACE: "place the rolled pieces",
    MOVE: "move cars",
    STOP: "endless jam: choose the town where it stops",
    OVER: "game over",
}


def _car(c: int) -> str:
    return "n" if c == 0 else str(c - 1)


def _dice(game: JammingTrafficGame, rec: np.void) -> str:
    if rec["dice"][0] < 0:
        return "-"
    labels = []
    for f in rec["dice"]:
        v = game.faces[int(f)]
        labels.append("R" if v == ROUNDABOUT else ("O" if v == ONE_WAY else str(v)))
    return " ".join(labels)


def _header(game: JammingTrafficGame, rec: np.void, seat: int | None) -> list[str]:
    ph = int(rec["phase"])
    n = game.num_players
    lines = [f"Jamming Traffic on {game.map.name!r} - turn {int(rec['turn']) + 1}"]
    if ph == OVER:
        win = [p for p in range(n) if rec["winner"][p]]
        lines.append("Game over: " + (f"player_{win[0]} wins" if win else "a draw (turn limit)"))
    else:
        you = " (you)" if seat is not None and seat == rec["cur"] else ""
        lines.append(f"player_{int(rec['cur'])}{you} to move - {PHASE_TEXT[ph]}")
        pend = [w for w, f in (("roundabout", rec["pend_rb"]), ("one-way", rec["pend_ow"])) if f]
        lines.append(f"Dice {_dice(game, rec)}, moves left {int(rec['moves_left'])}"
                     + (f", to place: {', '.join(pend)}" if pend else ""))
    rb = (f"{game.town_name(int(rec['rb_town']))} {('ccw', 'cw')[int(rec['rb_dir'])]}"
          if rec["rb_town"] >= 0 else "-")
    ow = "-"
    if rec["ow_road"] >= 0:
        r = int(rec["ow_road"])
        a, b = game.map.roads[r][int(rec["ow_entry"])], game.map.roads[r][1 - int(rec["ow_entry"])]
        ow = f"road {r} {game.town_name(a)} -> {game.town_name(b)}"
    lines.append(f"Roundabout: {rb}   One-way: {ow}")
    if ph == STOP:
        loop = [game.town_name(t) for t in range(game.map.num_towns)
                if int(rec["loop_towns"]) >> t & 1]
        lines.append("Endless loop through: " + ", ".join(loop))
    return lines


def render_text(game: JammingTrafficGame, rec: np.void, seat: int | None) -> str:
    m = game.map
    lines = _header(game, rec, seat)
    lines.append("Roads (cars from the first town to the second; n = neutral, digit = seat):")
    w = max(len(game.town_name(t)) for t in range(m.num_towns))
    for r, (a, b) in enumerate(m.roads):
        n = int(rec["cnt"][r])
        cars = " ".join(_car(int(c)) for c in rec["q"][r][:n])
        mark = ""
        if r == rec["ow_road"]:
            mark += " one-way " + ("->" if rec["ow_entry"] == 0 else "<-")
        if rec["held"][r]:
            mark += " HELD (4)"
        lines.append(f"  {r:2d} {game.town_name(a):>{w}} [{cars:^9}] {game.town_name(b):<{w}}"
                     f"{mark}")
    lines.append("Players (home; towns visited / to visit):")
    need = m.num_towns - 1
    for p in range(game.num_players):
        home = int(rec["home"][p])
        vis = int(rec["visited"][p]) & ~(1 << home)
        towns = ", ".join(game.town_name(t) for t in range(m.num_towns) if vis >> t & 1)
        you = " (you)" if seat == p else ""
        lines.append(f"  player_{p}{you}: home {game.town_name(home)}; "
                     f"{bin(vis).count('1')}/{need} {towns}")
    return "\n".join(lines)


@cache
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's own scalable font (Pillow >= 10.1 ships it): never a system font path,
    so the picture looks the same on every machine; older Pillow gets its bitmap font."""
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


# ----------------------------------------------------------------------------- geometry

MAP_W, MAP_H, PAD, PANEL = 900, 720, 60, 300
TOWN_R = 14  # a town's circle
RING_R = 22  # the roundabout's arc round a town
CAR_S = 7  # half the side of a car's square on a road
CLEAR = 3  # the least gap between a label and anything it must not cover
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class MapLayout:
    """Where everything of a map goes in the picture, fixed per map: town centres,
    and each label's text and box, placed once so that no label covers a road (with
    its car squares), a town (with its roundabout ring), the one-way arrow slot of any
    road, or another label. The record only decides what is drawn in those places."""

    towns: tuple[tuple[float, float], ...]
    #: per town: its name's box; the visit dots go in a row just under the name
    town_labels: tuple[Box, ...]
    #: per road: its number's centre
    road_labels: tuple[tuple[float, float], ...]
    #: per road: the one-way arrow's centre (beside the road's middle)
    arrows: tuple[tuple[float, float], ...]


def _seg_box_dist(a: tuple[float, float], b: tuple[float, float], box: Box) -> float:
    """The distance between segment ab and an axis-aligned box (0 if they meet)."""
    x0, y0, x1, y1 = box
    (ax, ay), (bx, by) = a, b

    def inside(px: float, py: float) -> bool:
        return x0 <= px <= x1 and y0 <= py <= y1

    if inside(ax, ay) or inside(bx, by):
        return 0.0
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    edges = list(zip(corners, corners[1:] + corners[:1]))
    if any(_segs_cross(a, b, c, d) for c, d in edges):
        return 0.0
    best = min(_pt_seg_dist(c, a, b) for c in corners)
    return min(best, *(_pt_seg_dist(p, c, d) for p in (a, b) for c, d in edges))


def _pt_seg_dist(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    L = dx * dx + dy * dy
    t = 0.0 if L == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / L))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


def _segs_cross(a, b, c, d) -> bool:  # noqa: ANN001 - points
    def orient(p, q, r) -> float:  # noqa: ANN001
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    o1, o2, o3, o4 = orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)
    return (o1 * o2 < 0) and (o3 * o4 < 0)


def box_clear_of_map(box: Box, towns: tuple[tuple[float, float], ...],
                     segments: list[tuple[tuple[float, float], tuple[float, float]]]) -> bool:
    """Whether ``box`` keeps ``CLEAR`` pixels off every road (line and car squares)
    and every town (circle and roundabout ring)."""
    half = CAR_S * math.sqrt(2) + CLEAR
    if any(_seg_box_dist(a, b, box) < half for a, b in segments):
        return False
    x0, y0, x1, y1 = box
    for tx, ty in towns:
        nx, ny = min(max(tx, x0), x1), min(max(ty, y0), y1)
        if math.hypot(tx - nx, ty - ny) < RING_R + CLEAR + 1:
            return False
    return True


def _boxes_meet(a: Box, b: Box, gap: float = CLEAR) -> bool:
    return not (a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1]
                or b[3] + gap <= a[1])


def _text_box(text: str, size: int, cx: float, cy: float, extra_h: float = 0) -> Box:
    """The box of ``text`` with ``extra_h`` more room below it, centred at (cx, cy)."""
    w = font(size).getlength(text)
    h = size + 2 + extra_h
    return (cx - w / 2 - 1, cy - h / 2, cx + w / 2 + 1, cy + h / 2)


DOTS_H = 9  # the row of visit dots under a town's name


@lru_cache(maxsize=16)
def map_layout(m: Map, town_names: tuple[str, ...]) -> MapLayout:
    """Place the map in the picture and its labels clear of roads, towns and each other
    (see :class:`MapLayout`). Candidates are tried nearest first; a label that finds
    no clear place at all (a map too crowded to label) takes its least bad candidate."""
    xs = [x for x, _ in m.towns]
    ys = [y for _, y in m.towns]
    dx = max(max(xs) - min(xs), 1e-6)
    dy = max(max(ys) - min(ys), 1e-6)
    scale = min((MAP_W - 2 * PAD) / dx, (MAP_H - 2 * PAD) / dy)
    ox = PAD + (MAP_W - 2 * PAD - dx * scale) / 2
    oy = MAP_H - PAD - (MAP_H - 2 * PAD - dy * scale) / 2
    towns = tuple((ox + (x - min(xs)) * scale, oy - (y - min(ys)) * scale) for x, y in m.towns)
    segs = [(towns[a], towns[b]) for a, b in m.roads]
    # the one-way arrow slot of each road: beside its middle (it may be any road's turn)
    arrows = []
    for a, b in m.roads:
        (x0, y0), (x1, y1) = towns[a], towns[b]
        L = math.hypot(x1 - x0, y1 - y0)
        ux, uy = (x1 - x0) / L, (y1 - y0) / L
        arrows.append(((x0 + x1) / 2 + uy * 20, (y0 + y1) / 2 - ux * 20))
    placed: list[Box] = [(ax - 16, ay - 16, ax + 16, ay + 16) for ax, ay in arrows]

    def score(box: Box) -> float:
        """0 when the box is clear; otherwise how much it collides (to pick the least bad)."""
        bad = 0.0 if box_clear_of_map(box, towns, segs) else 10.0
        bad += sum(1.0 for q in placed if _boxes_meet(box, q))
        x0, y0, x1, y1 = box
        if x0 < 2 or y0 < 2 or x1 > MAP_W - 2 or y1 > MAP_H - 2:
            bad += 20.0
        return bad

    town_boxes: list[Box] = []
    for t, (x, y) in enumerate(towns):
        name = town_names[t]
        best: tuple[float, Box] | None = None
        for r in (28, 32, 36, 41, 47, 54, 62, 72):
            for k in range(16):  # above first, then round the town
                turn = (k + 1) // 2 * (1 if k % 2 == 0 else -1)  # 0, -1, 1, -2, 2, ...
                ang = math.pi / 2 + turn * math.pi / 8
                cx, cy = x + r * math.cos(ang), y - r * math.sin(ang)
                box = _text_box(name, 12, cx, cy, DOTS_H)
                s = score(box)
                if best is None or s < best[0]:
                    best = (s, box)
                if s == 0:
                    break
            if best is not None and best[0] == 0:
                break
        assert best is not None
        town_boxes.append(best[1])
        placed.append(best[1])
    road_pts = []
    for r, (a, b) in enumerate(m.roads):
        (x0, y0), (x1, y1) = towns[a], towns[b]
        L = math.hypot(x1 - x0, y1 - y0)
        ux, uy = (x1 - x0) / L, (y1 - y0) / L
        best2: tuple[float, Box, tuple[float, float]] | None = None
        for off in (16, 22, 30):
            for f in (0.5, 0.38, 0.62, 0.3, 0.7):
                for side in (-1, 1):
                    cx = x0 + (x1 - x0) * f - side * uy * off
                    cy = y0 + (y1 - y0) * f + side * ux * off
                    box = _text_box(str(r), 11, cx, cy)
                    s = score(box)
                    if best2 is None or s < best2[0]:
                        best2 = (s, box, (cx, cy))
                    if s == 0:
                        break
                if best2 is not None and best2[0] == 0:
                    break
            if best2 is not None and best2[0] == 0:
                break
        assert best2 is not None
        placed.append(best2[1])
        road_pts.append(best2[2])
    return MapLayout(towns, tuple(town_boxes), tuple(road_pts), tuple(arrows))


def label_boxes(game: JammingTrafficGame) -> tuple[list[Box], list[Box]]:
    """The town-label boxes and road-number boxes the picture draws (for tests)."""
    lay = map_layout(game.map, _names(game))
    roads = [_text_box(str(r), 11, cx, cy) for r, (cx, cy) in enumerate(lay.road_labels)]
    return list(lay.town_labels), roads


def _names(game: JammingTrafficGame) -> tuple[str, ...]:
    return tuple(game.town_name(t) for t in range(game.map.num_towns))


def render_image(game: JammingTrafficGame, rec: np.void, seat: int | None) -> np.ndarray:
    """The map (roads with their car queues, towns, homes, visits, roundabout and
    one-way sign) and a side panel with the turn and each player's progress."""
    m = game.map
    lay = map_layout(m, _names(game))
    img = Image.new("RGB", (MAP_W + PANEL, MAP_H), (250, 248, 240))
    d = ImageDraw.Draw(img)
    pts = lay.towns
    small = font(11)
    # roads with their car slots
    for r, (a, b) in enumerate(m.roads):
        (x0, y0), (x1, y1) = pts[a], pts[b]
        held = bool(rec["held"][r])
        d.line([(x0, y0), (x1, y1)], fill=(200, 60, 60) if held else (120, 120, 120),
               width=4 if held else 3)
        n = int(rec["cnt"][r])
        slots = max(n, 3)
        length = math.hypot(x1 - x0, y1 - y0)
        ux, uy = (x1 - x0) / length, (y1 - y0) / length
        inner = length - 2 * 24
        for i in range(slots):
            f = 24 + inner * (i + 0.5) / slots
            cx, cy = x0 + ux * f, y0 + uy * f
            s = CAR_S
            if i < n:
                c = int(rec["q"][r][i])
                col = NEUTRAL_RGB if c == 0 else PLAYER_RGB[(c - 1) % len(PLAYER_RGB)]
                d.rectangle([cx - s, cy - s, cx + s, cy + s], fill=col, outline=(40, 40, 40))
            else:
                d.rectangle([cx - s, cy - s, cx + s, cy + s], outline=(170, 170, 170))
        lx, ly = lay.road_labels[r]
        d.text((lx, ly), str(r), fill=(110, 110, 110), font=small, anchor="mm")
        if r == rec["ow_road"]:  # one-way arrow beside the road, pointing to the exit end
            sgn = 1 if rec["ow_entry"] == 0 else -1
            ax, ay = lay.arrows[r]
            tx, ty = ax + sgn * ux * 18, ay + sgn * uy * 18
            bx, by = ax - sgn * ux * 18, ay - sgn * uy * 18
            d.line([(bx, by), (tx, ty)], fill=(0, 0, 0), width=3)
            d.polygon([(tx, ty), (tx - sgn * ux * 10 + uy * 6, ty - sgn * uy * 10 - ux * 6),
                       (tx - sgn * ux * 10 - uy * 6, ty - sgn * uy * 10 + ux * 6)],
                      fill=(0, 0, 0))
    # towns, homes, visits
    n_players = game.num_players
    homes = {int(rec["home"][p]): p for p in range(n_players)}
    for t in range(m.num_towns):
        x, y = pts[t]
        rad = TOWN_R
        outline = PLAYER_RGB[homes[t] % 10] if t in homes else (60, 60, 60)
        d.ellipse([x - rad, y - rad, x + rad, y + rad], fill=(255, 255, 255), outline=outline,
                  width=4 if t in homes else 2)
        if t == rec["rb_town"]:
            R = RING_R
            d.arc([x - R, y - R, x + R, y + R], 0, 300, fill=(0, 0, 0), width=3)
            # arrow head at the arc's end shows the direction (screen y points down)
            ang = math.radians(300 if rec["rb_dir"] == 0 else 0)
            hx, hy = x + R * math.cos(ang), y + R * math.sin(ang)
            sgn = -1 if rec["rb_dir"] == 0 else 1
            tang = (-math.sin(ang) * sgn, math.cos(ang) * sgn)
            d.polygon([(hx + tang[0] * 9, hy + tang[1] * 9),
                       (hx - 6 * math.cos(ang), hy - 6 * math.sin(ang)),
                       (hx + 6 * math.cos(ang), hy + 6 * math.sin(ang))], fill=(0, 0, 0))
        d.text((x, y), str(t), fill=(0, 0, 0), font=small, anchor="mm")
        bx0, by0, bx1, by1 = lay.town_labels[t]
        cx = (bx0 + bx1) / 2
        d.text((cx, by0 + 7), game.town_name(t), fill=(30, 30, 30), font=font(12), anchor="mm")
        vis = [p for p in range(n_players) if int(rec["visited"][p]) >> t & 1
               and int(rec["home"][p]) != t]
        for i, p in enumerate(vis):  # a dot per player who has visited the town
            vx = cx + (i - (len(vis) - 1) / 2) * 9
            vy = by1 - 4
            d.ellipse([vx - 3.5, vy - 3.5, vx + 3.5, vy + 3.5], fill=PLAYER_RGB[p % 10])
    # side panel
    px = MAP_W + 10
    y = 12
    for line in _header(game, rec, seat):
        for chunk in _wrap_px(line, small, PANEL - 20):
            d.text((px, y), chunk, fill=(0, 0, 0), font=small)
            y += 15
    y += 10
    need = m.num_towns - 1
    for p in range(n_players):
        home = int(rec["home"][p])
        vis = int(rec["visited"][p]) & ~(1 << home)
        d.rectangle([px, y, px + 14, y + 14], fill=PLAYER_RGB[p % 10])
        you = " (you)" if seat == p else ""
        tomove = "  < to move" if p == rec["cur"] and rec["phase"] != OVER else ""
        win = "  WINNER" if rec["phase"] == OVER and rec["winner"][p] else ""
        d.text((px + 20, y), f"player_{p}{you}{tomove}{win}", fill=(0, 0, 0), font=font(14))
        y += 17
        d.text((px + 20, y), f"home {game.town_name(home)}, {bin(vis).count('1')}/{need} "
               "visited", fill=(50, 50, 50), font=small)
        y += 14
        left = [str(t) for t in range(m.num_towns) if t != home and not vis >> t & 1]
        for chunk in _wrap_px("to visit: " + (" ".join(left) or "-"), small, PANEL - 40):
            d.text((px + 20, y), chunk, fill=(90, 90, 90), font=small)
            y += 13
        y += 6
    return np.asarray(img, dtype=np.uint8).copy()


def _wrap_px(text: str, f: ImageFont.FreeTypeFont | ImageFont.ImageFont, width: float
             ) -> list[str]:
    """Lines of at most ``width`` pixels, broken between phrases (at " - ", ", ",
    ": ") before words, so a panel line never splits "turn 68" from its number."""
    if f.getlength(text) <= width:
        return [text]
    for sep in ("   ", " - ", ", ", ": "):
        parts = text.split(sep)
        if len(parts) > 1:
            out, line = [], ""
            for i, part in enumerate(parts):
                piece = part + (sep.rstrip() if i < len(parts) - 1 else "")
                cand = f"{line} {piece}".strip() if line else piece
                if line and f.getlength(cand) > width:
                    out.append(line)
                    line = piece
                else:
                    line = cand
            out.append(line)
            if all(f.getlength(o) <= width for o in out):
                return out
    out, line = [], ""
    for word in text.split(" "):
        cand = f"{line} {word}" if line else word
        if line and f.getlength(cand) > width:
            out.append(line)
            line = word
        else:
            line = cand
    return out + [line]


# ----------------------------------------------------------------------------- compact text


def _abbr(names: list[str], width: int = 4) -> list[str]:
    """Town names cut to ``width`` letters, or their numbers if two would read the same."""
    cut = [n[:width] for n in names]
    return cut if len(set(cut)) == len(cut) else [str(i) for i in range(len(names))]


def pack_phrases(phrases: list[str], width: int = 80, sep: str = " | ") -> list[str]:
    """Phrases joined by ``sep`` into as few lines of at most ``width`` as fit, never
    breaking inside a phrase (a phrase longer than a line gets a line of its own)."""
    lines: list[str] = []
    for ph in phrases:
        if lines and len(lines[-1]) + len(sep) + len(ph) <= width:
            lines[-1] += sep + ph
        else:
            lines.append(ph)
    return lines


def render_compact(game: JammingTrafficGame, rec: np.void, seat: int | None) -> str:
    """The board in at most 80 columns and about 16 lines (for ``trafficenvs play`` in
    an 80x24 terminal): three roads a line, towns cut to four letters."""
    m = game.map
    names = _abbr([game.town_name(t) for t in range(m.num_towns)])
    ph = int(rec["phase"])
    n = game.num_players
    head = f"Jamming Traffic on {m.name!r}, turn {int(rec['turn']) + 1}"
    if ph == OVER:
        win = [p for p in range(n) if rec["winner"][p]]
        phrases = [head, f"game over, player_{win[0]} wins" if win else "game over, a draw"]
    else:
        you = " (you)" if seat is not None and seat == rec["cur"] else ""
        phrases = [head, f"player_{int(rec['cur'])}{you}: {PHASE_TEXT[ph]}"]
    pend = [w for w, f in (("roundabout", rec["pend_rb"]), ("one-way", rec["pend_ow"])) if f]
    rb = (f"{names[int(rec['rb_town'])]} {('ccw', 'cw')[int(rec['rb_dir'])]}"
          if rec["rb_town"] >= 0 else "-")
    ow = "-"
    if rec["ow_road"] >= 0:
        r = int(rec["ow_road"])
        a, b = m.roads[r][int(rec["ow_entry"])], m.roads[r][1 - int(rec["ow_entry"])]
        ow = f"road {r} {names[a]}->{names[b]}"
    phrases.append(f"dice {_dice(game, rec)}, moves left {int(rec['moves_left'])}"
                   + (f", to place: {', '.join(pend)}" if pend else ""))
    phrases += [f"roundabout {rb}", f"one-way {ow}"]
    lines = pack_phrases(phrases)
    if ph == STOP:
        loop = [names[t] for t in range(m.num_towns) if int(rec["loop_towns"]) >> t & 1]
        lines.append("endless loop through: " + " ".join(loop))
    lines.append("roads, cars from the first town on (n neutral, digit seat, H held 4):")
    cells = []
    for r, (a, b) in enumerate(m.roads):
        cnt = int(rec["cnt"][r])
        cars = "".join(_car(int(c)) for c in rec["q"][r][:cnt]) or "."
        mark = ("H" if rec["held"][r] else "") + (
            (">" if rec["ow_entry"] == 0 else "<") if r == rec["ow_road"] else "")
        cells.append(f"{r:2d} {names[a]:>4}-{names[b]:<4} {cars + mark:<6}")
    for i in range(0, len(cells), 3):
        lines.append("  ".join(cells[i:i + 3]).rstrip())
    need = m.num_towns - 1
    ps = []
    for p in range(n):
        home = int(rec["home"][p])
        vis = int(rec["visited"][p]) & ~(1 << home)
        you = "*" if seat == p else ""
        ps.append(f"p{p}{you} home {names[home]} {bin(vis).count('1')}/{need}")
    lines.append("players (visited/to visit; * you):")
    for i in range(0, len(ps), 4):
        lines.append("  " + "  ".join(f"{c:<17}" for c in ps[i:i + 4]).rstrip())
    return "\n".join(lines)


def menu_paths(game: JammingTrafficGame, rec: np.void, legal: np.ndarray
               ) -> list[tuple[list[str], int]]:
    """``trafficenvs play``'s grouping of the legal moves (100-150 in a move phase):
    a car by its road first, then where it goes; a piece's town or road, then its
    direction; the rest one by one."""
    from trafficenvs.jamming_traffic.game import DIRECTIONS

    m = game.map
    out = []
    for a in legal:
        kind, args = game.decode(int(a))
        if kind == "move":
            r, x, o = args
            n = int(rec["cnt"][r])
            car = int(rec["q"][r][0 if x == 0 else max(n - 1, 0)]) if n else 0
            who = "neutral car" if car == 0 else f"player_{car - 1}'s car"
            t = game.town_name(m.roads[r][x])
            path = [f"road {r}", f"{who} through {t} onto {game.road_label(o)}"]
        elif kind == "roundabout":
            t, d = args
            path = ["place the roundabout", game.town_name(t), DIRECTIONS[d]]
        elif kind == "one_way":
            r, e = args
            a0, b0 = m.roads[r][e], m.roads[r][1 - e]
            path = ["place the one-way sign", f"road {r}",
                    f"{game.town_name(a0)} -> {game.town_name(b0)}"]
        else:
            path = [game.action_name(rec, int(a))]
        out.append((path, int(a)))
    return out
