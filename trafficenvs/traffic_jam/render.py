"""Traffic Jam renders: text (ansi) and a Pillow picture (rgb_array), drawn as the table.

Both read a record and never change it, and both show only what ``seat`` may see
(T6): the three roads with the cards revealed on them, every player's joy and
victory pile, how many cards each holds and whether they have picked this stage
(a face-down card in front of them), and the last trip's reveals. Only the viewing
seat's hand and its own face-down picks are drawn face up; ``seat=None`` is a
spectator who sees no hand at all (earlier versions showed the mover's hand, which
leaked a hidden hand into every unseated render).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from trafficenvs.traffic_jam.rules.layout import TIMES, TYPES, size_of_types

if TYPE_CHECKING:
    from trafficenvs.traffic_jam.game import TrafficJamGame
    from trafficenvs.traffic_jam.rules.deck import Card

TRIP_NAMES = ("to the country", "back to the city")
STAGE_NAMES = ("first vehicles", "car and surprise")
#: the size icon printed on a card (rulebook, "Description of Transport Cards"):
#: trucks take 1 for the first and 2 for each further one, all buses of a road
#: together take 1, a motorcycle takes 0 alone and 1 with another
SIZE_TEXT = ("2", "1", "1", "1/2", "1*", "0/1", "0", "1")
COND_TEXT = ("free", "jam", "either")


def _cards(game: TrafficJamGame, counts: np.ndarray, time: int | None = None) -> list[int]:
    out: list[int] = []
    for k in range(game.num_kinds):
        if time is None or game.deck.kinds[k].time == time:
            out += [k] * int(counts[k])
    return out


def _viewer(game: TrafficJamGame, seat: int | None) -> int | None:
    """The seat whose hidden cards may be drawn, or None for a spectator."""
    if seat is None:
        return None
    seat = int(seat)
    if not 0 <= seat < game.num_players:
        raise ValueError(f"seat must be in 0..{game.num_players - 1} or None, got {seat}")
    return seat


def _header(rec: np.void) -> str:
    if rec["over"]:
        return "Traffic Jam - game over"
    return (
        f"Traffic Jam - round {rec['round'] + 1}/3, trip {rec['trip'] + 1}/2 "
        f"({TRIP_NAMES[rec['trip']]}), stage {rec['stage'] + 1}: {STAGE_NAMES[rec['stage']]}"
        f" - player_{rec['cur']} to move"
    )


def _picked(rec: np.void, p: int) -> int:
    """Face-down cards seat ``p`` has in front of it this stage (public: you see them)."""
    if rec["stage"] == 0:
        return int(rec["pick1"][p] >= 0)
    return 2 * int(rec["pick_car"][p] >= 0)


def _road_now(rec: np.void, game: TrafficJamGame, t: int) -> list[tuple[int, int]]:
    """This trip's cards on road ``t`` as (kind, seat that revealed it)."""
    return [(int(rec["shown1"][p]), p) for p in range(game.num_players)
            if rec["shown1"][p] >= 0 and game.deck.kinds[int(rec["shown1"][p])].time == t]


def _road_last(rec: np.void, game: TrafficJamGame, t: int) -> list[tuple[int, int, str]]:
    """The last trip's cards on road ``t`` as (kind, seat, role: first, car, surprise)."""
    out = []
    for p in range(game.num_players):
        for role, field in (("first", "last_first"), ("car", "last_car"),
                            ("surprise", "last_sur")):
            k = int(rec[field][p])
            if k >= 0 and game.deck.kinds[k].time == t:
                out.append((k, p, role))
    return out


def _size(game: TrafficJamGame, kinds: list[int]) -> int:
    per_type = [0] * len(TYPES)
    for k in kinds:
        per_type[game.deck.kinds[k].type] += 1
    return size_of_types(per_type)


def card_text(card: Card) -> str:
    """A card in words, as printed on it: ``[4 van s2 free]`` (joy, type, size icon,
    when it brings joy)."""
    return f"[{card.joy} {TYPES[card.type]} s{SIZE_TEXT[card.type]} {COND_TEXT[card.condition]}]"


def _wrap_items(head: str, items: list[str], width: int = 80) -> list[str]:
    """``head`` then the items, wrapped at ``width`` (continuation lines indented)."""
    lines, line, fresh = [], head, True
    for it in items:
        if not fresh and len(line) + 1 + len(it) > width:
            lines.append(line)
            line, fresh = " " * min(len(head), 8), True
        line += it if fresh else " " + it
        fresh = False
    return lines + [line]


def render_text(game: TrafficJamGame, rec: np.void, seat: int | None) -> str:
    """The table in at most 80 columns: roads, last trip, players, the viewer's hand."""
    n = game.num_players
    kinds = game.deck.kinds
    v = _viewer(game, seat)
    first, _, mover = _header(rec).rpartition(" - ")
    lines = [first or mover,
             (f"{mover}; " if first else "") + f"deck {rec['deck_n']} cards, discard pile "
             f"{rec['discard_n']}; a road jams over size {n}"]
    for t, tname in enumerate(TIMES):
        now = _road_now(rec, game, t)
        if now or rec["last_jam"][t] < 0 or rec["stage"] == 1:
            size = _size(game, [k for k, _ in now])
            head = f"{tname:<7s} size {size}/{n}: "
            items = [f"p{p}{card_text(kinds[k])}" for k, p in now] or ["-"]
        else:  # nothing revealed yet this trip: the road still shows the last trip
            last = _road_last(rec, game, t)
            size = _size(game, [k for k, _, _ in last])
            verdict = "JAM" if rec["last_jam"][t] else "free"
            head = f"{tname:<7s} last trip size {size}/{n} {verdict}: "
            items = [f"p{p}{'=car' if role == 'car' else ''}{card_text(kinds[k])}"
                     for k, p, role in last] or ["-"]
        lines += _wrap_items(head, items)
    lines.append("player     joy cards in hand picked last trip  card: [joy type s=size condition]")
    for p in range(n):
        you = "*" if p == v else " "
        mark = " WINS" if rec["over"] and rec["winner"][p] else ""
        last = ""
        c = int(rec["last_car"][p])
        if c >= 0:
            ok = "joy" if rec["last_scored"][p] else "no joy"
            last = f"car on {kinds[c].label} {ok}"
        lines.append(f"player_{p}{you} {rec['joy'][p]:3d} {rec['vcount'][p]:5d} "
                     f"{rec['hand_n'][p]:7d} {_picked(rec, p):6d} {last}{mark}".rstrip())
    if v is not None:
        mine = []
        if rec["pick1"][v] >= 0:
            mine.append("first " + card_text(kinds[int(rec["pick1"][v])]))
        if rec["pick_car"][v] >= 0:
            mine += ["car " + card_text(kinds[int(rec["pick_car"][v])]),
                     "surprise " + card_text(kinds[int(rec["pick_sur"][v])])]
        if mine:
            lines += _wrap_items(f"Face down by player_{v}: ", mine)
        hand = [card_text(kinds[k]) for k in _cards(game, rec["hand"][v])] or ["-"]
        lines += _wrap_items(f"Hand of player_{v}: ", hand)
    return "\n".join(lines)


# ----------------------------------------------------------------------------- picture

TIME_COLOURS = ((253, 222, 140), (150, 205, 245), (52, 62, 120))
TIME_INK = ((30, 30, 30), (20, 30, 50), (240, 240, 250))
SEAT_COLOURS = ((220, 50, 47), (38, 139, 210), (80, 150, 20), (211, 54, 130), (181, 137, 0),
                (42, 161, 152))
TABLE = (40, 110, 70)
FELT_TEXT = (240, 244, 236)
CW, CH, GAP = 70, 96, 6
W = 1120
#: the type's name as printed on the card, in at most two lines
TYPE_LINES = (("van",), ("cabriolet",), ("buggy",), ("truck",), ("bus",), ("motor-", "cycle"),
              ("hot-air", "balloon"), ("ice cream", "truck"))


@cache
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's own scalable font (Pillow >= 10.1 ships it): never a system font path,
    so the picture looks the same on every machine; older Pillow gets its bitmap font."""
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def _time_icon(d: ImageDraw.ImageDraw, t: int, x: float, y: float, r: float = 7,
               bg: tuple[int, ...] = TIME_COLOURS[2]) -> None:
    """Morning a rising sun, day a full sun, night a crescent moon (top right of a card)."""
    if t == 0:
        d.pieslice([x - r, y - r, x + r, y + r], 180, 360, fill=(240, 120, 20))
        d.line([(x - r - 2, y), (x + r + 2, y)], fill=(120, 60, 10), width=1)
    elif t == 1:
        d.ellipse([x - r, y - r, x + r, y + r], fill=(250, 200, 30), outline=(200, 120, 0))
    else:
        d.ellipse([x - r, y - r, x + r, y + r], fill=(240, 240, 200))
        d.ellipse([x - r + 4, y - r - 2, x + r + 4, y + r - 2], fill=bg)


def _cond_icon(d: ImageDraw.ImageDraw, c: int, x: float, y: float, r: float = 9) -> None:
    """Free flowing a green disc with an open arrow, jam a red disc with cars nose to
    tail, either a disc half of each (the rulebook's bottom-right icon)."""
    box = [x - r, y - r, x + r, y + r]
    green, red = (40, 160, 60), (210, 40, 40)
    if c == 2:
        d.pieslice(box, 90, 270, fill=green)
        d.pieslice(box, 270, 450, fill=red)
    else:
        d.ellipse(box, fill=green if c == 0 else red)
    white = (255, 255, 255)
    if c in (0, 2):
        ax = x - r + 3 if c == 0 else x - r + 2
        bx = x + r - 4 if c == 0 else x - 1
        d.line([(ax, y), (bx, y)], fill=white, width=2)
        d.polygon([(bx + 2, y), (bx - 2, y - 3), (bx - 2, y + 3)], fill=white)
    if c in (1, 2):
        x0 = x - 6 if c == 1 else x + 1
        for i in range(3 if c == 1 else 2):
            d.rectangle([x0 + i * 4, y - 2, x0 + i * 4 + 2, y + 2], fill=white)
    d.ellipse(box, outline=(30, 30, 30))


def draw_card(d: ImageDraw.ImageDraw, x: float, y: float, card: Card, faded: bool = False,
              car: tuple[int, int, int] | None = None) -> None:
    """One transport card as printed: joy top left, time of day top right, the type in
    the middle, size bottom left, joy condition bottom right. ``car`` draws a player's
    car figure on it; ``faded`` greys a card of the trip before."""
    fill = TIME_COLOURS[card.time]
    ink = TIME_INK[card.time]
    if faded:
        fill = tuple((c + 2 * 225) // 3 for c in fill)
        ink = (90, 90, 90)
    d.rounded_rectangle([x, y, x + CW, y + CH], radius=7, fill=fill, outline=(25, 25, 25),
                        width=2)
    d.text((x + 6, y + 3), str(card.joy), fill=ink, font=font(20))
    _time_icon(d, card.time, x + CW - 12, y + 13, bg=fill)
    lines = TYPE_LINES[card.type]
    for i, word in enumerate(lines):
        d.text((x + CW / 2, y + 46 + (i - (len(lines) - 1) / 2) * 13), word, fill=ink,
               font=font(12), anchor="mm")
    sz = SIZE_TEXT[card.type]
    d.rounded_rectangle([x + 4, y + CH - 22, x + 10 + 7 * len(sz), y + CH - 5], radius=3,
                        fill=(250, 250, 250), outline=(60, 60, 60))
    d.text((x + 7 + 3.5 * len(sz), y + CH - 13), sz, fill=(20, 20, 20), font=font(11),
           anchor="mm")
    _cond_icon(d, card.condition, x + CW - 13, y + CH - 14)
    if car is not None:  # on the top edge, between the joy and the time of day
        _car(d, x + CW / 2 + 1, y + 17, car)


def _car(d: ImageDraw.ImageDraw, x: float, y: float, colour: tuple[int, int, int]) -> None:
    """A wooden car figure (seen from the side)."""
    d.rounded_rectangle([x - 14, y - 4, x + 14, y + 5], radius=3, fill=colour,
                        outline=(20, 20, 20))
    d.rounded_rectangle([x - 7, y - 10, x + 7, y - 3], radius=3, fill=colour,
                        outline=(20, 20, 20))
    for wx in (x - 8, x + 8):
        d.ellipse([wx - 3, y + 2, wx + 3, y + 8], fill=(20, 20, 20))


def _back(d: ImageDraw.ImageDraw, x: float, y: float, w: float = CW, h: float = CH,
          label: str = "") -> None:
    """A face-down card (its back), with an optional count or word on it."""
    d.rounded_rectangle([x, y, x + w, y + h], radius=6, fill=(150, 40, 40), outline=(25, 25, 25),
                        width=2)
    d.rounded_rectangle([x + 5, y + 5, x + w - 5, y + h - 5], radius=4, outline=(230, 200, 120),
                        width=1)
    if label:
        d.text((x + w / 2, y + h / 2), label, fill=(255, 240, 210), font=font(14), anchor="mm")


def _star(d: ImageDraw.ImageDraw, x: float, y: float, r: float, fill: tuple[int, int, int]) -> None:
    pts = []
    for i in range(10):
        a = np.pi / 2 + i * np.pi / 5
        rr = r if i % 2 == 0 else r * 0.45
        pts.append((x + rr * np.cos(a), y - rr * np.sin(a)))
    d.polygon(pts, fill=fill, outline=(40, 40, 40))


def _row(d: ImageDraw.ImageDraw, x0: float, x1: float, count: int) -> float:
    """The step between cards so ``count`` cards fit between ``x0`` and ``x1``
    (crowded roads overlap their cards like a fanned row)."""
    room = x1 - x0 - CW
    return min(CW + GAP, room / max(1, count - 1))


def render_image(game: TrafficJamGame, rec: np.void, seat: int | None) -> np.ndarray:
    """The table from above: deck and discard, the three roads with the time-of-day
    cards, each player's place (car, joy, victory pile, hand size, face-down picks),
    and the viewer's hand along the bottom."""
    n = game.num_players
    kinds = game.deck.kinds
    v = _viewer(game, seat)
    road_h = CH + 30
    roads_y = 56
    seats_y = roads_y + 3 * road_h + 8
    panel_h = 150
    cols = n if n <= 4 else 3
    rows = -(-n // cols)
    hand_y = seats_y + rows * (panel_h + 8)
    height = hand_y + (CH + 50 if v is not None else 0) + 8
    img = Image.new("RGB", (W, height), TABLE)
    d = ImageDraw.Draw(img)
    d.text((14, 10), _header(rec), fill=FELT_TEXT, font=font(18))
    d.text((14, 34), f"a road jams when its size is over {n} (the number of players)",
           fill=(200, 220, 200), font=font(13))
    # deck and discard pile, left of the roads
    _back(d, 16, roads_y + 10, label=f"{rec['deck_n']}")
    d.text((16 + CW / 2, roads_y + CH + 20), "deck", fill=FELT_TEXT, font=font(13), anchor="mm")
    dy = roads_y + CH + 40
    d.rounded_rectangle([16, dy, 16 + CW, dy + CH], radius=6, outline=(200, 220, 200), width=2)
    d.text((16 + CW / 2, dy + CH / 2), f"{rec['discard_n']}", fill=FELT_TEXT, font=font(16),
           anchor="mm")
    d.text((16 + CW / 2, dy + CH + 10), "discard", fill=FELT_TEXT, font=font(13), anchor="mm")
    # the roads
    rx = 110
    for t, tname in enumerate(TIMES):
        y = roads_y + t * road_h
        d.rounded_rectangle([rx, y, W - 12, y + road_h - 8], radius=10, fill=(78, 78, 82))
        for xx in range(rx + 150, W - 20, 36):  # lane markings
            d.line([(xx, y + road_h - 14), (xx + 18, y + road_h - 14)], fill=(230, 230, 230),
                   width=2)
        # the time-of-day card
        tc = [rx + 8, y + 8, rx + 118, y + CH + 8]
        d.rounded_rectangle(tc, radius=8, fill=TIME_COLOURS[t], outline=(20, 20, 20), width=2)
        _time_icon(d, t, rx + 63, y + 26, 11)
        d.text((rx + 63, y + 50), tname.upper(), fill=TIME_INK[t], font=font(15), anchor="mm")
        now = _road_now(rec, game, t)
        show_last = not now and rec["last_jam"][t] >= 0 and rec["stage"] == 0
        if show_last:
            last = _road_last(rec, game, t)
            size = _size(game, [k for k, _, _ in last])
            jam = bool(rec["last_jam"][t])
            status = f"last trip: {size}/{n}"
            verdict = "JAM" if jam else "free flowing"
        else:
            size = _size(game, [k for k, _ in now])
            status = f"size {size}/{n}"
            verdict = "JAM" if size > n else "free flowing"
            jam = size > n
        d.text((rx + 63, y + 72), status, fill=TIME_INK[t], font=font(12), anchor="mm")
        d.rounded_rectangle([rx + 18, y + 80, rx + 108, y + 97], radius=5,
                            fill=(200, 30, 30) if jam else (30, 130, 50))
        d.text((rx + 63, y + 88), verdict, fill=(255, 255, 255), font=font(12), anchor="mm")
        x0 = rx + 130
        if show_last:
            step = _row(d, x0, W - 24, len(last))
            for i, (k, p, role) in enumerate(last):
                cx = x0 + i * step
                draw_card(d, cx, y + 8, kinds[k], faded=True,
                          car=SEAT_COLOURS[p] if role == "car" else None)
                d.rectangle([cx + 8, y + CH + 10, cx + CW - 8, y + CH + 14], fill=SEAT_COLOURS[p])
                if role == "car":
                    scored = rec["last_scored"][p] == 1
                    # under the card, on its seat's bar: a star if the car scored, else a cross
                    sx, sy = cx + CW / 2, y + CH + 12
                    if scored:
                        _star(d, sx, sy, 9, (255, 215, 0))
                    else:
                        d.line([(sx - 6, sy - 6), (sx + 6, sy + 6)], fill=(230, 30, 30), width=3)
                        d.line([(sx - 6, sy + 6), (sx + 6, sy - 6)], fill=(230, 30, 30), width=3)
        else:
            step = _row(d, x0, W - 24, len(now))
            for i, (k, p) in enumerate(now):
                cx = x0 + i * step
                draw_card(d, cx, y + 8, kinds[k])
                d.rectangle([cx + 8, y + CH + 10, cx + CW - 8, y + CH + 14], fill=SEAT_COLOURS[p])
    # the players' places
    pw = (W - 24 - (cols - 1) * 8) / cols
    for p in range(n):
        r, c = divmod(p, cols)
        x, y = 12 + c * (pw + 8), seats_y + r * (panel_h + 8)
        on = p == rec["cur"] and not rec["over"]
        d.rounded_rectangle([x, y, x + pw, y + panel_h], radius=10, fill=(60, 130, 88),
                            outline=(255, 230, 90) if on else (30, 80, 50), width=4 if on else 2)
        _car(d, x + 24, y + 22, SEAT_COLOURS[p])
        you = " (you)" if p == v else ""
        turn = " - to move" if on else ""
        win = "  WINNER" if rec["over"] and rec["winner"][p] else ""
        d.text((x + 46, y + 8), f"player_{p}{you}{turn}{win}", fill=FELT_TEXT, font=font(15))
        d.text((x + 46, y + 28), f"{rec['joy'][p]} joy points", fill=(255, 230, 90), font=font(14))
        # victory pile, hand (backs unless it is the viewer's) and face-down picks
        yy = y + 50
        _back(d, x + 10, yy, 46, 64, label=str(rec["vcount"][p]))
        d.text((x + 33, yy + 74), "victory", fill=FELT_TEXT, font=font(11), anchor="mm")
        _back(d, x + 66, yy, 46, 64, label=str(rec["hand_n"][p]))
        d.text((x + 89, yy + 74), "in hand", fill=FELT_TEXT, font=font(11), anchor="mm")
        picked = _picked(rec, p)
        for i in range(picked):
            _back(d, x + 124 + i * 12, yy + 4 + i * 4, 46, 64)
        if picked:
            d.text((x + 153, yy + 74), "face down", fill=FELT_TEXT, font=font(11), anchor="mm")
        lc = int(rec["last_car"][p])
        if lc >= 0:
            ok = rec["last_scored"][p] == 1
            d.text((x + 10, y + panel_h - 18),
                   f"last trip: car on {kinds[lc].label} - {'joy!' if ok else 'no joy'}",
                   fill=(255, 230, 90) if ok else (215, 225, 215), font=font(12))
    if v is not None:
        y = hand_y
        d.text((14, y), f"hand of player_{v} (you)", fill=FELT_TEXT, font=font(15))
        x = 14
        mine = []
        if rec["pick1"][v] >= 0:
            mine.append(("first card", int(rec["pick1"][v])))
        if rec["pick_car"][v] >= 0:
            mine += [("car", int(rec["pick_car"][v])), ("surprise", int(rec["pick_sur"][v]))]
        hand = _cards(game, rec["hand"][v])
        for k in hand:
            draw_card(d, x, y + 22, kinds[k])
            x += CW + GAP
        if not hand:
            d.text((14, y + 60), "(empty)", fill=FELT_TEXT, font=font(13))
            x = 200
        if mine:
            x += 30
            d.text((x, y), "your face-down cards", fill=FELT_TEXT, font=font(13))
            for role, k in mine:
                draw_card(d, x, y + 22, kinds[k], car=SEAT_COLOURS[v] if role == "car" else None)
                d.text((x + CW / 2, y + CH + 32), role, fill=FELT_TEXT, font=font(11),
                       anchor="mm")
                x += CW + GAP
    return np.asarray(img, dtype=np.uint8).copy()


def render_compact(game: TrafficJamGame, rec: np.void, seat: int | None) -> str:
    """The board for ``trafficenvs play``: the text render already fits 80 columns and
    about 20 lines (six players)."""
    return render_text(game, rec, seat)


# ----------------------------------------------------------------------------- for `play`


def menu_paths(game: TrafficJamGame, rec: np.void, legal: np.ndarray
               ) -> list[tuple[list[str], int]]:
    """``trafficenvs play``'s grouping of the legal moves: stage 1 one card; stage 2
    the car's card first, then the surprise (30 pairs become 6 + 5 choices)."""
    kinds = game.deck.kinds
    out = []
    for a in legal:
        car, sur = game.decode(int(a))
        if sur is None:
            out.append(([f"play {kinds[car].label}"], int(a)))
        else:
            out.append(([f"car on {kinds[car].label}", f"surprise {kinds[sur].label}"], int(a)))
    return out


def public_move(game: TrafficJamGame, rec: np.void, action: int) -> str:
    """A move as the table sees it: picks are face down (T3), so only that a card, or
    a car and a surprise, was put down."""
    _, sur = game.decode(int(action))
    return ("puts a card face down" if sur is None
            else "puts a car card and a surprise card face down")


def reveals(game: TrafficJamGame, before: np.void, after: np.void) -> list[str]:
    """What a stage's last pick turned over, in words: the first cards, or every car
    and surprise with whose car scored and which roads jammed."""
    kinds = game.deck.kinds
    n = game.num_players
    out = []
    if before["stage"] == 0 and after["stage"] == 1:
        out.append("revealed: " + ", ".join(f"player_{p} {kinds[after['shown1'][p]].label}"
                                            for p in range(n) if after["shown1"][p] >= 0))
    elif before["stage"] == 1 and (after["stage"] == 0 or after["over"]):
        for p in range(n):
            c, s = int(after["last_car"][p]), int(after["last_sur"][p])
            if c >= 0:
                ok = "joy!" if after["last_scored"][p] == 1 else "no joy"
                out.append(f"player_{p}: car on {kinds[c].label} ({ok}), surprise "
                           f"{kinds[s].label}")
        out.append("roads: " + ", ".join(f"{t} {'JAM' if after['last_jam'][i] == 1 else 'free'}"
                                         for i, t in enumerate(TIMES)))
    return out
