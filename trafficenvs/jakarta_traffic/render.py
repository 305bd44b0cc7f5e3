"""Jakarta Traffic renders: text (ansi) and a Pillow picture (rgb_array).

Both read a record and never change it. Everything in this game is open
information, so ``seat`` only marks whose phone is drawn first ("you").
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from trafficenvs.jakarta_traffic.rules.board import conn_at, stack_at
from trafficenvs.jakarta_traffic.rules.layout import (
    A_ACCEPT,
    A_CELL,
    A_DRIVE,
    A_ROTATE,
    A_SWAP,
    ADDRESSES,
    CENTRE,
    CHARGING,
    EDGES,
    MAX_ENERGY,
    NCELLS,
    NSLOTS,
    NTYPES,
    PICKUP,
    PLACE,
    SIDE,
    STAR_VALUES,
    TYPES,
)
from trafficenvs.jakarta_traffic.rules.orders import slot_pays
from trafficenvs.jakarta_traffic.rules.scoring import final_score
from trafficenvs.jakarta_traffic.rules.tiles import FRAME_ENDS

if TYPE_CHECKING:
    from trafficenvs.jakarta_traffic.game import JakartaTrafficGame

TYPE_ABBR = ("Bk", "NG", "Sa", "Ib", "Bp")
ADDR_ABBR = ("BC", "Sp", "Re", "Wo", "Ma")
PHASE_TEXT = ("honk or drive", "drive or detour", "pick any tile (double 6)",
              "accept the order?", "place the rest of the stack", "deliver?")


@cache
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's own scalable font (Pillow >= 10.1 ships it): never a system font path,
    so the picture looks the same on every machine; older Pillow gets its bitmap font."""
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def _header(rec: np.void) -> str:
    if rec["over"]:
        return f"Jakarta Traffic - game over after {rec['round']} rounds"
    trig = " - LAST ROUND" if rec["trigger"] else ""
    return (f"Jakarta Traffic - round {rec['round'] + 1}, player_{rec['cur']} to move: "
            f"{PHASE_TEXT[rec['phase']]}{trig}")


def _tokens(rec: np.void, n: int, x: int) -> str:
    s = ""
    t = stack_at(rec, x)
    if t >= 0:
        s += f"{TYPE_ABBR[t]}{rec['stack_n'][t]}"
    for p in range(n):
        if rec["pos"][p] == x:
            s += str(p)
    if rec["marker"] == x:
        s += "*"
    return s


def _centre_label(game: JakartaTrafficGame, rec: np.void, x: int) -> str:
    tile = game.tiles.tiles[rec["cell_tile"][x]]
    if tile.kind == PICKUP:
        return " (o) "
    if tile.kind == CHARGING:
        return " <^> "
    return f"[{ADDR_ABBR[tile.address]}] "


def render_text(game: JakartaTrafficGame, rec: np.void, seat: int | None) -> str:
    n = game.num_players
    c = game.cfg[0]
    lines = [_header(rec)]
    lines.append("paths: | - lead to the parking spot, : = pass by it;  (o) pick-up  "
                 "<^> charging  [Sp] building;  Sa4 = stack of 4 Sate, 0-3 mopeds, * marker")
    lines.append("      " + "".join(f"   c{col + 1}    " for col in range(SIDE)))
    for r in range(SIDE):
        rows = ["", "", "", ""]
        for col in range(SIDE):
            x = r * SIDE + col
            ends = [int(conn_at(rec, c, x, e)) for e in range(4)]
            north = "|" if ends[0] == CENTRE else ":"
            east = "-" if ends[1] == CENTRE else "="
            south = "|" if ends[2] == CENTRE else ":"
            west = "-" if ends[3] == CENTRE else "="
            rows[0] += f"    {north}    "
            rows[1] += f"{west}{west}{_centre_label(game, rec, x)}{east}{east}"
            rows[2] += f"{_tokens(rec, n, x):^9s}"
            rows[3] += f"    {south}    "
        lines.append("      " + rows[0])
        lines.append(f"  r{r + 1}  " + rows[1])
        lines.append("      " + rows[2])
        lines.append("      " + rows[3])
    pairs = []
    for i in range(0, len(FRAME_ENDS), 2):
        (x1, e1), (x2, e2) = FRAME_ENDS[i], FRAME_ENDS[i + 1]
        pairs.append(f"{_cell(x1)}{EDGES[e1]}-{_cell(x2)}{EDGES[e2]}")
    lines.append("alleys: " + " ".join(pairs))
    lines.append("Order board (order: stars now -> address):")
    for i in range(NSLOTS):
        t = rec["ord_slot"][i]
        j = slot_pays(rec, i)
        val = 0 if j < 0 else int(STAR_VALUES[j])
        k = min(i + 1, NSLOTS - 1)
        a = rec["addr_slot"][k]
        out = f"   (out: {ADDRESSES[rec['addr_slot'][0]]})" if i == 0 else ""
        lines.append(f"  {TYPES[t]:11s} {val} stars -> {ADDRESSES[a]} "
                     f"at {_cell(rec['addr_cell'][a])}   [pile {rec['star_left'][i]}]{out}")
    lines.append("Phones:")
    order = list(range(n)) if seat is None else [(seat + j) % n for j in range(n)]
    for p in order:
        orders = ", ".join(TYPES[t] for t in range(NTYPES) if rec["held"][p, t]) or "-"
        stars = []
        for s in range(NSLOTS):
            stars += [str(int(STAR_VALUES[s]))] * int(rec["stars"][p, s])
        mark = " (winner)" if rec["over"] and rec["winner"][p] else ""
        you = " (you)" if seat is not None and p == seat else ""
        lines.append(
            f"  player_{p}{you} at {_cell(rec['pos'][p])}: energy {rec['energy'][p]}/3, "
            f"bubbles {rec['bubbles'][p]}, stars [{' '.join(stars)}] = {rec['points'][p]}, "
            f"orders: {orders}, passengers delivered {rec['passengers'][p]}, spare "
            f"{game.tile_spec(rec['spare'][p])}, score {int(final_score(rec, p))}{mark}")
    return "\n".join(lines)


def _cell(x: int) -> str:
    r, c = divmod(int(x), SIDE)
    return f"r{r + 1}c{c + 1}"


# ----------------------------------------------------------------------------- picture

TILE = 96
MARGIN = 40
KIND_FILL = ((214, 222, 206), (236, 226, 170), (208, 200, 226))
PATH = (40, 100, 200)
SEAT_COLOURS = ((220, 50, 47), (38, 139, 210), (60, 150, 40), (211, 54, 130))
TYPE_COLOURS = ((190, 120, 60), (230, 170, 40), (150, 80, 40), (200, 90, 160), (90, 90, 200))
EDGE_VEC = ((0, -1), (1, 0), (0, 1), (-1, 0))


def _edge_mid(x0: int, y0: int, e: int) -> tuple[int, int]:
    dx, dy = EDGE_VEC[e]
    return x0 + TILE // 2 + dx * TILE // 2, y0 + TILE // 2 + dy * TILE // 2


def _draw_tile(d: ImageDraw.ImageDraw, font, game: JakartaTrafficGame, rec: np.void, x: int,
               x0: int, y0: int) -> None:
    c = game.cfg[0]
    tile = game.tiles.tiles[rec["cell_tile"][x]]
    d.rectangle([x0, y0, x0 + TILE, y0 + TILE], fill=KIND_FILL[tile.kind], outline=(90, 90, 90))
    cx, cy = x0 + TILE // 2, y0 + TILE // 2
    ends = [int(conn_at(rec, c, x, e)) for e in range(4)]
    for e in range(4):
        f = ends[e]
        if f == CENTRE:
            d.line([_edge_mid(x0, y0, e), (cx, cy)], fill=PATH, width=7)
    for e in range(4):
        f = ends[e]
        if f == CENTRE or f < e:
            continue
        if (f - e) % 2 == 0:  # straight across: a bridge over the centre path
            a, b = _edge_mid(x0, y0, e), _edge_mid(x0, y0, f)
            d.line([a, b], fill=(250, 250, 250), width=13)
            d.line([a, b], fill=PATH, width=7)
        else:  # a curve round the corner between the two edges
            corner_x = x0 + (TILE if 1 in (e, f) else 0)
            corner_y = y0 + (TILE if 2 in (e, f) else 0)
            r = TILE // 2
            start = {(0, 3): 0, (0, 1): 90, (1, 2): 180, (2, 3): 270}[(e, f)]
            d.arc([corner_x - r, corner_y - r, corner_x + r, corner_y + r], start, start + 90,
                  fill=PATH, width=7)
    s = 14
    if tile.kind == PICKUP:
        d.ellipse([cx - s, cy - s, cx + s, cy + s], fill=(250, 250, 250), outline=(0, 0, 0),
                  width=2)
    elif tile.kind == CHARGING:
        d.polygon([(cx, cy - s - 2), (cx + s + 2, cy + s), (cx - s - 2, cy + s)],
                  fill=(250, 230, 80), outline=(0, 0, 0))
    else:
        d.rectangle([cx - s, cy - s, cx + s, cy + s], fill=(250, 250, 250), outline=(0, 0, 0),
                    width=2)
        d.text((cx, cy), ADDR_ABBR[tile.address], fill=(0, 0, 0), font=font, anchor="mm")


def _draw_alleys(d: ImageDraw.ImageDraw) -> None:
    """K3: the frame's fixed alleys joining rim path ends in pairs."""
    for i in range(0, len(FRAME_ENDS), 2):
        pts = []
        for x, e in FRAME_ENDS[i: i + 2]:
            r, col = divmod(x, SIDE)
            px, py = _edge_mid(MARGIN + col * TILE, MARGIN + r * TILE, e)
            dx, dy = EDGE_VEC[e]
            pts.append(((px, py), (px + dx * 20, py + dy * 20)))
        (a0, a1), (b0, b1) = pts
        d.line([a0, a1, b1, b0], fill=(120, 120, 120), width=5, joint="curve")


def render_image(game: JakartaTrafficGame, rec: np.void, seat: int | None) -> np.ndarray:
    n = game.num_players
    f = font(12)
    grid = SIDE * TILE
    width = MARGIN * 2 + grid + 380
    height = max(MARGIN * 2 + grid + 30, 60 + 170 + n * 80)
    img = Image.new("RGB", (width, height), (245, 244, 238))
    d = ImageDraw.Draw(img)
    d.rectangle([MARGIN - 28, MARGIN - 28, MARGIN + grid + 28, MARGIN + grid + 28],
                fill=(196, 186, 170))
    _draw_alleys(d)
    for x in range(NCELLS):
        r, col = divmod(x, SIDE)
        _draw_tile(d, f, game, rec, x, MARGIN + col * TILE, MARGIN + r * TILE)
    for x in range(NCELLS):
        r, col = divmod(x, SIDE)
        x0, y0 = MARGIN + col * TILE, MARGIN + r * TILE
        t = stack_at(rec, x)
        if t >= 0:
            for k in range(int(rec["stack_n"][t])):
                yy = y0 + TILE - 14 - 4 * k
                d.rectangle([x0 + 6, yy, x0 + 26, yy + 8], fill=TYPE_COLOURS[t], outline=(0, 0, 0))
            d.text((x0 + 6, y0 + TILE - 34 - 4 * int(rec["stack_n"][t])), TYPE_ABBR[t],
                   fill=(0, 0, 0), font=f)
        if rec["marker"] == x:
            mx, my = x0 + TILE - 16, y0 + 16
            d.polygon([(mx, my - 10), (mx + 8, my), (mx, my + 10), (mx - 8, my)],
                      fill=(255, 120, 0), outline=(0, 0, 0))
        here = [p for p in range(n) if rec["pos"][p] == x]
        for k, p in enumerate(here):
            mx, my = x0 + TILE // 2 + 18 + 0 * k, y0 + 10 + 18 * k
            d.ellipse([mx - 8, my - 8, mx + 8, my + 8], fill=SEAT_COLOURS[p], outline=(0, 0, 0))
            d.text((mx, my), str(p), fill=(255, 255, 255), font=f, anchor="mm")
    d.text((MARGIN, 6), _header(rec), fill=(0, 0, 0), font=f)
    # the order board
    bx = MARGIN * 2 + grid
    d.text((bx, MARGIN - 20), "order board: order  stars -> address", fill=(0, 0, 0), font=f)
    for i in range(NSLOTS):
        y = MARGIN + i * 26
        t = rec["ord_slot"][i]
        j = slot_pays(rec, i)
        val = 0 if j < 0 else int(STAR_VALUES[j])
        a = rec["addr_slot"][min(i + 1, NSLOTS - 1)]
        d.rectangle([bx, y, bx + 20, y + 18], fill=TYPE_COLOURS[t], outline=(0, 0, 0))
        # in columns: the font is proportional, so padding with spaces would not align
        d.text((bx + 26, y + 3), TYPES[t], fill=(0, 0, 0), font=f)
        d.text((bx + 112, y + 3), f"{val}* ({rec['star_left'][i]} left) -> {ADDRESSES[a]}",
               fill=(0, 0, 0), font=f)
    d.text((bx, MARGIN + 5 * 26), f"out: {ADDRESSES[rec['addr_slot'][0]]}",
           fill=(90, 90, 90), font=f)
    # the phones
    order = list(range(n)) if seat is None else [(seat + j) % n for j in range(n)]
    for k, p in enumerate(order):
        y = MARGIN + 170 + k * 80
        on = p == rec["cur"] and not rec["over"]
        d.rounded_rectangle([bx, y, bx + 360, y + 72], radius=8, fill=(255, 255, 255),
                            outline=SEAT_COLOURS[p], width=4 if on else 2)
        win = "  WINNER" if rec["over"] and rec["winner"][p] else ""
        d.text((bx + 8, y + 6), f"player_{p}  score {int(final_score(rec, p))}{win}",
               fill=SEAT_COLOURS[p], font=f)
        for e in range(MAX_ENERGY):
            fill = (60, 180, 60) if e < rec["energy"][p] else (220, 220, 220)
            d.rectangle([bx + 8 + e * 14, y + 24, bx + 20 + e * 14, y + 40], fill=fill,
                        outline=(0, 0, 0))
        for b in range(int(rec["bubbles"][p])):
            d.ellipse([bx + 60 + b * 16, y + 24, bx + 72 + b * 16, y + 36],
                      fill=SEAT_COLOURS[p], outline=(0, 0, 0))
        stars = []
        for s in range(NSLOTS):
            stars += [str(int(STAR_VALUES[s]))] * int(rec["stars"][p, s])
        d.text((bx + 120, y + 24), f"stars {' '.join(stars) or '-'}", fill=(0, 0, 0), font=f)
        orders = [t for t in range(NTYPES) if rec["held"][p, t]]
        for i, t in enumerate(orders):
            d.rectangle([bx + 8 + i * 90, y + 48, bx + 24 + i * 90, y + 64], fill=TYPE_COLOURS[t],
                        outline=(0, 0, 0))
            d.text((bx + 28 + i * 90, y + 50), TYPES[t], fill=(0, 0, 0), font=f)
        d.text((bx + 200, y + 50), f"delivered {int(rec['delivered'][p].sum())} "
               f"({rec['passengers'][p]} pass.)", fill=(60, 60, 60), font=f)
    return np.asarray(img, dtype=np.uint8).copy()


# ----------------------------------------------------------------------------- compact text

LABEL4 = {PICKUP: "(o) ", CHARGING: "<^> "}


def _tokens_spaced(rec: np.void, n: int, x: int) -> str:
    """``"Sa4 02*"``: the stack (type and height), then mopeds and marker."""
    t = stack_at(rec, x)
    stack = f"{TYPE_ABBR[t]}{rec['stack_n'][t]}" if t >= 0 else ""
    rest = "".join(str(p) for p in range(n) if rec["pos"][p] == x)
    rest += "*" if rec["marker"] == x else ""
    return f"{stack} {rest}".strip() if stack and rest else stack or rest


def render_compact(game: JakartaTrafficGame, rec: np.void, seat: int | None) -> str:
    """The board in at most 80 columns and about 20 lines (for ``trafficenvs play`` in
    an 80x24 terminal): two lines a row of tiles; between two rows, the upper tile's
    south end and the lower tile's north end side by side."""
    n = game.num_players
    c = game.cfg[0]
    lines = [_header(rec),
             "(o) pick-up <^> charging [Ma] building; |- to the spot, := pass by; * marker"]
    lines.append("    " + "".join(f"c{col + 1:<11d}" for col in range(SIDE)).rstrip())

    def ends(x: int) -> list[int]:
        return [int(conn_at(rec, c, x, e)) for e in range(4)]

    def vert(e: int) -> str:
        return "|" if e == CENTRE else ":"

    lines.append("    " + "".join(f"  {vert(ends(col)[0])}         "
                                    for col in range(SIDE)).rstrip())
    for r in range(SIDE):
        row = ""
        for col in range(SIDE):
            x = r * SIDE + col
            e = ends(x)
            tile = game.tiles.tiles[rec["cell_tile"][x]]
            label = LABEL4.get(tile.kind, f"[{ADDR_ABBR[tile.address]}]")
            west = "-" if e[3] == CENTRE else "="
            east = "-" if e[1] == CENTRE else "="
            row += f"{west}{label}{_tokens_spaced(rec, n, x):<6.6s}{east}"
        lines.append(f"r{r + 1}  " + row.rstrip())
        between = ""
        for col in range(SIDE):
            x = r * SIDE + col
            below = vert(ends(x + SIDE)[0]) if r + 1 < SIDE else " "
            between += f"  {vert(ends(x)[2])}{below}        "
        lines.append("    " + between.rstrip())
    slots = []
    for i in range(NSLOTS):
        t = rec["ord_slot"][i]
        j = slot_pays(rec, i)
        val = 0 if j < 0 else int(STAR_VALUES[j])
        a = rec["addr_slot"][min(i + 1, NSLOTS - 1)]
        slots.append(f"{TYPES[t]} {val}*->{ADDR_ABBR[a]} {_cell(rec['addr_cell'][a])}")
    lines.append("orders: " + " | ".join(slots[:3]))
    lines.append("        " + " | ".join(slots[3:])
                 + f" | out: {ADDRESSES[rec['addr_slot'][0]]}")
    order = list(range(n)) if seat is None else [(seat + j) % n for j in range(n)]
    for p in order:
        held = ",".join(TYPE_ABBR[t] for t in range(NTYPES) if rec["held"][p, t]) or "-"
        you = "*" if p == seat else " "
        win = " WINNER" if rec["over"] and rec["winner"][p] else ""
        line = (f"p{p}{you} {_cell(rec['pos'][p])} score {int(final_score(rec, p))}{win}: "
                f"energy {rec['energy'][p]}/3 bubbles {rec['bubbles'][p]} stars "
                f"{rec['points'][p]} orders {held} spare {game.tile_spec(rec['spare'][p])}")
        if len(line) > 80:  # the spare tile on a line of its own
            cut = line.rindex(" spare ")
            line = line[:cut] + "\n    " + line[cut + 1:]
        lines.append(line)
    return "\n".join(lines)


def menu_paths(game: JakartaTrafficGame, rec: np.void, legal: np.ndarray
               ) -> list[tuple[list[str], int]]:
    """``trafficenvs play``'s grouping of the legal moves (about 100 when honking): a
    honk picks the tile first, then how to turn or swap it; a cell choice picks the
    cell; driving, detours and orders are one choice each."""
    from trafficenvs.jakarta_traffic.game import TURN_NAMES, cell_name

    out = []
    for a in legal:
        a = int(a)
        if a < A_SWAP:
            x, k = divmod(a - A_ROTATE, 3)
            path = ["honk: turn or swap a tile", cell_name(x), f"rotate {TURN_NAMES[k]}"]
        elif a < A_DRIVE:
            x, r = divmod(a - A_SWAP, 4)
            path = ["honk: turn or swap a tile", cell_name(x),
                    f"swap your spare tile in, rotation {r}"]
        elif A_CELL <= a < A_ACCEPT:
            what = ("put the rest of the stack on a pick-up tile" if rec["phase"] == PLACE
                    else "park on any tile (double 6)")
            path = [what, cell_name(a - A_CELL)]
        else:
            path = [game.action_name(rec, a)]
        out.append((path, a))
    return out
