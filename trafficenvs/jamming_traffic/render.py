"""Jamming Traffic renders: text (ansi) and a Pillow picture of the map (rgb_array).

Both read a record and never change it. Nothing is hidden in this game, so ``seat``
only marks whose view it is ("you").
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from trafficenvs.jamming_traffic import kernels as K

if TYPE_CHECKING:
    from trafficenvs.jamming_traffic.game import JammingTrafficGame

PLAYER_RGB = [
    (220, 40, 40), (30, 110, 230), (30, 160, 60), (240, 160, 0), (150, 60, 200),
    (0, 170, 170), (230, 90, 170), (120, 80, 40), (90, 90, 90), (190, 190, 0),
]
NEUTRAL_RGB = (205, 205, 205)
PHASE_TEXT = {
    K.SETUP: "set-up: choose the road your car starts on",
    K.PLACE: "place the rolled pieces",
    K.MOVE: "move cars",
    K.STOP: "endless jam: choose the town where it stops",
    K.OVER: "game over",
}


def _car(c: int) -> str:
    return "n" if c == 0 else str(c - 1)


def _dice(game: JammingTrafficGame, rec: np.void) -> str:
    if rec["dice"][0] < 0:
        return "-"
    labels = []
    for f in rec["dice"]:
        v = game.faces[int(f)]
        labels.append("R" if v == K.ROUNDABOUT else ("O" if v == K.ONE_WAY else str(v)))
    return " ".join(labels)


def _header(game: JammingTrafficGame, rec: np.void, seat: int | None) -> list[str]:
    ph = int(rec["phase"])
    n = game.num_players
    lines = [f"Jamming Traffic on {game.map.name!r} - turn {int(rec['turn']) + 1}"]
    if ph == K.OVER:
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
    if ph == K.STOP:
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


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def render_image(game: JammingTrafficGame, rec: np.void, seat: int | None) -> np.ndarray:
    m = game.map
    W, H, panel = 900, 720, 260
    img = Image.new("RGB", (W + panel, H), (250, 248, 240))
    d = ImageDraw.Draw(img)
    xs = [x for x, _ in m.towns]
    ys = [y for _, y in m.towns]
    pad = 60
    dx = max(max(xs) - min(xs), 1e-6)
    dy = max(max(ys) - min(ys), 1e-6)
    scale = min((W - 2 * pad) / dx, (H - 2 * pad) / dy)

    def pt(t: int) -> tuple[float, float]:
        x, y = m.towns[t]
        return pad + (x - min(xs)) * scale, H - pad - (y - min(ys)) * scale

    font, small = _font(14), _font(11)
    # roads with their car slots
    for r, (a, b) in enumerate(m.roads):
        (x0, y0), (x1, y1) = pt(a), pt(b)
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
            s = 7
            if i < n:
                c = int(rec["q"][r][i])
                col = NEUTRAL_RGB if c == 0 else PLAYER_RGB[(c - 1) % len(PLAYER_RGB)]
                d.rectangle([cx - s, cy - s, cx + s, cy + s], fill=col, outline=(40, 40, 40))
            else:
                d.rectangle([cx - s, cy - s, cx + s, cy + s], outline=(170, 170, 170))
        mx, my = (x0 + x1) / 2, (y0 + y1) / 2
        d.text((mx - uy * 16, my + ux * 16), str(r), fill=(110, 110, 110), font=small,
               anchor="mm")
        if r == rec["ow_road"]:  # one-way arrow beside the road, pointing to the exit end
            sgn = 1 if rec["ow_entry"] == 0 else -1
            ax, ay = mx + uy * 18, my - ux * 18
            tx, ty = ax + sgn * ux * 22, ay + sgn * uy * 22
            bx, by = ax - sgn * ux * 22, ay - sgn * uy * 22
            d.line([(bx, by), (tx, ty)], fill=(0, 0, 0), width=3)
            d.polygon([(tx, ty), (tx - sgn * ux * 10 + uy * 6, ty - sgn * uy * 10 - ux * 6),
                       (tx - sgn * ux * 10 - uy * 6, ty - sgn * uy * 10 + ux * 6)],
                      fill=(0, 0, 0))
    # towns, homes, visits
    n_players = game.num_players
    homes = {int(rec["home"][p]): p for p in range(n_players)}
    for t in range(m.num_towns):
        x, y = pt(t)
        rad = 14
        outline = PLAYER_RGB[homes[t] % 10] if t in homes else (60, 60, 60)
        d.ellipse([x - rad, y - rad, x + rad, y + rad], fill=(255, 255, 255), outline=outline,
                  width=4 if t in homes else 2)
        if t == rec["rb_town"]:
            d.arc([x - 22, y - 22, x + 22, y + 22], 0, 300, fill=(0, 0, 0), width=3)
            # arrow head at the arc's end shows the direction (screen y points down)
            ang = math.radians(300 if rec["rb_dir"] == 0 else 0)
            hx, hy = x + 22 * math.cos(ang), y + 22 * math.sin(ang)
            sgn = -1 if rec["rb_dir"] == 0 else 1
            tang = (-math.sin(ang) * sgn, math.cos(ang) * sgn)
            d.polygon([(hx + tang[0] * 9, hy + tang[1] * 9),
                       (hx - 6 * math.cos(ang), hy - 6 * math.sin(ang)),
                       (hx + 6 * math.cos(ang), hy + 6 * math.sin(ang))], fill=(0, 0, 0))
        for p in range(n_players):  # a dot per player who has visited the town
            if int(rec["visited"][p]) >> t & 1:
                a = 2 * math.pi * p / max(n_players, 1)
                vx, vy = x + 30 * math.cos(a), y + 30 * math.sin(a)
                d.ellipse([vx - 4, vy - 4, vx + 4, vy + 4], fill=PLAYER_RGB[p % 10])
        d.text((x, y), str(t), fill=(0, 0, 0), font=small, anchor="mm")
        d.text((x, y - 26), game.town_name(t), fill=(30, 30, 30), font=small, anchor="mm")
    # side panel
    px = W + 10
    lines = _header(game, rec, seat)
    y = 12
    for line in lines:
        for chunk in _wrap(line, 36):
            d.text((px, y), chunk, fill=(0, 0, 0), font=small)
            y += 15
    y += 10
    need = m.num_towns - 1
    for p in range(n_players):
        home = int(rec["home"][p])
        vis = int(rec["visited"][p]) & ~(1 << home)
        d.rectangle([px, y, px + 14, y + 14], fill=PLAYER_RGB[p % 10])
        you = " (you)" if seat == p else ""
        tomove = " <" if p == rec["cur"] and rec["phase"] != K.OVER else ""
        d.text((px + 20, y), f"player_{p}{you}{tomove}", fill=(0, 0, 0), font=font)
        y += 17
        d.text((px + 20, y), f"home {game.town_name(home)}, {bin(vis).count('1')}/{need} visited",
               fill=(50, 50, 50), font=small)
        y += 14
        left = [str(t) for t in range(m.num_towns) if t != home and not vis >> t & 1]
        for chunk in _wrap("to visit: " + (" ".join(left) or "-"), 36):
            d.text((px + 20, y), chunk, fill=(90, 90, 90), font=small)
            y += 13
        y += 6
    return np.asarray(img, dtype=np.uint8)


def _wrap(text: str, width: int) -> list[str]:
    out, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return out + [line]
