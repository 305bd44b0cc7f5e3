"""Jakarta Traffic's data: limits and vocabulary, the record and config dtypes, and the
observation and action layouts (docs/rules/jakarta_traffic.md).

This is the one copy of the game's size limits: ``tiles.py``, ``game.py``, the rules
modules and the greedy player import them from here.

The board is a 5x5 grid of street tiles, cell ``x = row * 5 + col`` (row 0 at the
top, col 0 at the left). Tile edges are numbered N=0, E=1, S=2, W=3. A tile's paths
are looked up in ``cfg.conn[pattern, rotation, edge]``: the edge that path end leads
to inside the tile, or ``CENTRE`` (the parking spot). ``cfg.exit_to[x, e]`` says
where a moped leaving cell ``x`` through edge ``e`` enters next (``cell * 4 + edge``):
the neighbouring cell, or across the frame's alley (K3).

The observation (v1: uint8 entries, every one with its exact bound) has a length that
depends on the player count only (blocks per seat); ``max_rounds`` sets one bound. Its
cells and players blocks come first, so their offsets (and every part offset inside
a block) are module constants; the offsets after the players block are read from the
config record (``cfg.ob_<field>``, filled from :func:`obs_layout` by the Game). The
action space does not depend on the configuration, so its ranges are module constants
taken from :func:`action_layout`.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.layout import Field, Layout, Part, block, part_offsets

# ----------------------------------------------------------------------------- limits
MAX_PLAYERS = 4  # K1: 2-4 players
SIDE = 5  # K2: the board is SIDE x SIDE cells
NCELLS = SIDE * SIDE
MAX_TILES = 64  # K2: tiles of a tile set (a cfg array size; ``seen`` bit sets are int64)
MAX_PATTERNS = 8  # K2: patterns of a tile set
#: the largest max_rounds option and round of a state dict (the int32 round counter,
#: advanced once a round, never wraps; a game is cut off by the move limit long before)
MAX_ROUNDS = 1_000_000
NTYPES = 5  # order types (Bakso .. Bapak)
NADDR = 5  # delivery addresses, one building each
NSLOTS = 5  # K8: order slots = address slots = star piles
MAX_FORCED = 16  # dice a state dict may queue (``forced_dice``)
CENTRE = 4  # a path end that leads to the tile's parking spot (not an edge 0-3)
NO_DRIVE = 25  # ``drive_to``: no drive out of that edge (a cell number past the board)
MAX_ENERGY = 3  # K7: battery size
MAX_BUBBLES = 3  # K7: speech bubbles per player
END_STARS = 4  # K9: star tokens that trigger the end
NPERMS = 120  # K4: the 5! ways to put one stack in each row and column
FEAT_CODES = 64  # cell codes (kind << 4 | spot bits) the observation table covers

# ----------------------------------------------------------------------------- vocabulary
TYPES = ("Bakso", "Nasi Goreng", "Sate", "Ibu", "Bapak")
IBU, BAPAK = 3, 4  # the passengers
ADDRESSES = ("Business Center", "Spa", "Residency", "Workshop", "Mall")
KINDS = ("pickup", "charging", "building")
PICKUP, CHARGING, BUILDING = 0, 1, 2
EDGES = "NESW"
PHASES = ("honk", "drive", "detour_pick", "accept", "place_stack", "deliver")
HONK, DRIVE, DETOUR_PICK, ACCEPT, PLACE, DELIVER = range(6)
NPHASES = len(PHASES)
NO_SPARE = 255  # ``spare[p]`` of a seat that does not play

#: K8, side A: the star each order slot pays, top to bottom (5 tokens each)
STAR_VALUES = np.array([7, 5, 4, 3, 3], np.int64)
STARS_PER_SLOT = 5
#: K9: bonus points for 0, 1, 2, 3 speech bubbles
BUBBLE_BONUS = np.array([0, 1, 3, 5], np.int64)
#: the observation's round entry stops counting here (its exact bound)
OBS_ROUND_CAP = 100
#: the ``rounds_left`` entry stops counting here (a uint8 entry)
OBS_ROUNDS_LEFT_CAP = 255
#: K9's reachable maxima per seat (the observation's exact bounds; see the rules page):
#: star tokens (3 before the end is triggered, then a turn delivers at most 2), their
#: points (four 7s: the fourth star triggers the end; 3 x 7 + 3 + 3 for five), and the
#: score that adds energy and the bubble bonus
MAX_STARS = END_STARS + 1
MAX_POINTS = END_STARS * int(STAR_VALUES[0])
MAX_SCORE = MAX_POINTS + MAX_ENERGY + int(BUBBLE_BONUS[-1])
DIE_FACES = 6

# ----------------------------------------------------------------------------- observation
#: per cell; the first ``CELL_TILE_F`` entries come from the tile alone (``cfg.feat64``)
CELL_PARTS = (
    Part("ends", 4, "path ends N, E, S, W leading to the spot"),
    Part("kind", 3, "pick-up, charging station, building (one-hot)"),
    Part("stack", NTYPES, "the order stack here, by type (one-hot; its size: `types`)"),
    Part("marker", 1, "the manipulation marker lies here"),
    Part("me", 1, "my moped is here"),
    Part("others", 1, "competitors' mopeds here (bound N - 1)", high=-1),
)
PLAYER_PARTS = (
    Part("row", SIDE, "moped's row (one-hot)"),
    Part("col", SIDE, "moped's column (one-hot)"),
    Part("energy", 1, "energy", high=MAX_ENERGY),
    Part("bubbles", 1, "speech bubbles taken", high=MAX_BUBBLES),
    Part("stars", 1, "star tokens (bound 5: 3 before the end is triggered, then at most 2 "
         "in a turn)", high=MAX_STARS),
    Part("points", 1, "star points (bound 28: four 7s)", high=MAX_POINTS),
    Part("passengers", 1, "passengers (Ibu, Bapak) delivered (bound 2 (N + 1): all their "
         "tokens)", high=-1),
    Part("score", 1, "final score if the game ended now: points + energy + bubble bonus "
         "(bound 36)", high=MAX_SCORE),
    Part("holds", NTYPES, "holds an order of type t"),
    Part("spare_ends", 4, "spare tile's path ends N, E, S, W leading to the spot, at "
         "rotation 0"),
    Part("spare_charging", 1, "the spare is a charging station (else a pick-up tile)"),
)
TYPE_PARTS = (
    Part("slot", NSLOTS, "its order slot, top first (one-hot)"),
    Part("pays", 1, "star points a delivery would pay now (0: no star left for it)",
         high=int(STAR_VALUES[0])),
    Part("addr_row", SIDE, "row of its current address's building (one-hot)"),
    Part("addr_col", SIDE, "column of its current address's building (one-hot)"),
    Part("stack_n", 1, "tokens left in its stack (bound N + 1; where it lies: `cells`)",
         high=-1),
)
ADDR_PARTS = (
    Part("row", SIDE, "row of the building of the address in this slot (one-hot)"),
    Part("col", SIDE, "column of that building (one-hot)"),
)
DRIVE_PARTS = (
    Part("row", SIDE, "row where the drive parks (one-hot; all 0: no legal drive out of "
         "this edge)"),
    Part("col", SIDE, "column where it parks (one-hot)"),
    Part("kind", 3, "that tile's kind: pick-up, charging station, building (one-hot)"),
    Part("stack", NTYPES, "the order stack there, by type (one-hot)"),
    Part("mopeds", 1, "other seats' mopeds there, a chat (bound N - 1)", high=-1),
    Part("deliver", 1, "this seat could deliver there (K7: energy after the chat, an order "
         "for that address)"),
    Part("pickup", 1, "this seat could accept the order there (K7's limits, energy after "
         "the chat)"),
)


def _with_high(parts, **highs):
    """``parts`` with the bounds that depend on the configuration filled in."""
    return tuple(Part(p.name, p.length, p.meaning, highs.get(p.name, p.high)) for p in parts)


def obs_layout(num_players: int, max_rounds: int = 0) -> Layout:
    """The observation row of a seat (C4: seats from the observer's on), ``N`` players
    (every bound exact; ``max_rounds`` sets the bound of ``rounds_left``)."""
    N = num_players
    rounds_high = min(max_rounds, OBS_ROUNDS_LEFT_CAP) if max_rounds > 0 else 1
    return Layout("Jakarta Traffic observation", [
        block("cells", NCELLS, _with_high(CELL_PARTS, others=N - 1),
              "per cell x = row * 5 + col", "25 * 15"),
        block("players", N, _with_high(PLAYER_PARTS, passengers=2 * (N + 1)),
              "per seat, me first, then the others in turn order", "26 N"),
        block("types", NTYPES, _with_high(TYPE_PARTS, stack_n=N + 1),
              "per order type t (Bakso, Nasi Goreng, Sate, Ibu, Bapak)", "5 * 17"),
        block("addresses", NSLOTS, ADDR_PARTS, "per address slot of the order board, top "
              "(\"out\") first", "5 * 10"),
        block("drives", 4 * N, _with_high(DRIVE_PARTS, mopeds=N - 1),
              "derived: per seat (me first, as `players`) and exit edge (N, E, S, W) of its "
              "moped's tile, repeat 4 j + e: where that drive would park as the board lies "
              "now and what is there for that seat", "4 N * 21"),
        Field("phase", NPHASES, "phase one-hot (" + ", ".join(PHASES) + ")"),
        Field("to_move", N, "the seat to move, counted from me in turn order (one-hot; "
              "0: me)", "N"),
        Field("seat", N, "my seat in the round's order (one-hot; seat 0 starts every "
              "round, K9: the round ends after the last seat's turn)", "N"),
        Field("end_triggered", 1, "end triggered (last round)"),
        Field("marker_off", 1, "the marker is off the board"),
        Field("star_piles", NSLOTS, "star tokens left per order slot, top first",
              high=STARS_PER_SLOT),
        Field("dice", 2 * DIE_FACES, "the last detour's dice, column die then row die, each "
              "one-hot over faces 1-6 (all 0 before any detour)", "2 * 6"),
        Field("round", 1, f"rounds completed (capped at {OBS_ROUND_CAP})", high=OBS_ROUND_CAP),
        Field("rounds_left", 1, "rounds left before the `max_rounds` cut (capped at "
              f"{OBS_ROUNDS_LEFT_CAP}; bound min(max_rounds, {OBS_ROUNDS_LEFT_CAP})); "
              "1 (of bound 1) without a cap", high=rounds_high),
        Field("horizon_left", 1, "share of the move limit left, 0-255 (255: no limit; "
              "`core.clock`)", high=255),
    ], ranges=True)


#: the observation fields, in order: the config record holds each one's offset as
#: ``ob_<name>`` (filled from :func:`obs_layout` by the Game); ``observe`` writes by them
OBS_FIELDS = tuple(obs_layout(2).names())
_OB2 = obs_layout(2)
#: offsets that do not depend on the player count (the blocks before the seats' end)
OB_CELLS = _OB2.field("cells").offset
OB_PLAYERS = _OB2.field("players").offset

_CELL = part_offsets(CELL_PARTS)
CELL_F = _OB2.field("cells").stride  # entries per cell
CELL_ENDS = _CELL["ends"]
CELL_KIND = _CELL["kind"]
CELL_STACK = _CELL["stack"]
CELL_MARKER = _CELL["marker"]
CELL_ME = _CELL["me"]
CELL_OTHERS = _CELL["others"]
#: entries of a cell that come from its tile alone (``cfg.feat64[code]``)
CELL_TILE_F = CELL_STACK

_PL = part_offsets(PLAYER_PARTS)
PLAYER_F = _OB2.field("players").stride  # entries per seat
PL_ROW = _PL["row"]
PL_COL = _PL["col"]
PL_ENERGY = _PL["energy"]
PL_BUBBLES = _PL["bubbles"]
PL_STARS = _PL["stars"]
PL_POINTS = _PL["points"]
PL_PASSENGERS = _PL["passengers"]
PL_SCORE = _PL["score"]
PL_HOLDS = _PL["holds"]
PL_SPARE_ENDS = _PL["spare_ends"]
PL_SPARE_CHARGING = _PL["spare_charging"]

_TY = part_offsets(TYPE_PARTS)
TYPE_F = _OB2.field("types").stride  # entries per order type
TY_SLOT = _TY["slot"]
TY_PAYS = _TY["pays"]
TY_ADDR_ROW = _TY["addr_row"]
TY_ADDR_COL = _TY["addr_col"]
TY_STACK_N = _TY["stack_n"]

_AD = part_offsets(ADDR_PARTS)
ADDR_F = _OB2.field("addresses").stride
AD_ROW = _AD["row"]
AD_COL = _AD["col"]

_DR = part_offsets(DRIVE_PARTS)
DRIVE_F = _OB2.field("drives").stride  # entries per (seat, edge)
DR_ROW = _DR["row"]
DR_COL = _DR["col"]
DR_KIND = _DR["kind"]
DR_STACK = _DR["stack"]
DR_MOPEDS = _DR["mopeds"]
DR_DELIVER = _DR["deliver"]
DR_PICKUP = _DR["pickup"]


def obs_dim(num_players: int) -> int:
    """Length of one observation row: the layout's size, ``25*15 + 26N + 5*17 + 5*10 + 84N
    + 2N + 28`` = ``538 + 112 N``."""
    return obs_layout(num_players).size


# ----------------------------------------------------------------------------- actions


def action_layout() -> Layout:
    """The action space (C3); the same for every configuration."""
    return Layout("Jakarta Traffic actions", [
        Field("rotate", 3 * NCELLS, "honk: rotate cell x by k quarter turns clockwise, "
              "`a = 3x + k - 1`, k = 1..3; legal when no stack, moped or marker is on x",
              "3 * 25"),
        Field("swap", 4 * NCELLS, "honk: swap your spare into cell x at rotation r, "
              "`a - 75 = 4x + r`; legal as rotate, and x is not a building", "4 * 25"),
        Field("drive", 4, "honk, drive: drive out of edge e (N, E, S, W); legal when e leads "
              "to your spot and its path ends on another tile"),
        Field("detour", 1, "honk, drive: detour, roll the dice; always legal"),
        Field("cell", NCELLS, "detour_pick: park on cell x (after a double 6; any cell); "
              "place_stack: put the rest of the stack on cell x (a vacant pick-up tile)",
              "25"),
        Field("accept", 1, "accept: accept the order"),
        Field("decline", 1, "accept, deliver: decline the order / do not deliver"),
        Field("deliver", NTYPES, "deliver: deliver; order type t goes to the very bottom "
              "(legal when you deliver t now)", "5"),
    ])


_ACT = action_layout()
A_ROTATE = _ACT.field("rotate").offset  # + cell * 3 + (quarter turns clockwise - 1)
A_SWAP = _ACT.field("swap").offset  # + cell * 4 + rotation of the placed tile
A_DRIVE = _ACT.field("drive").offset  # + exit edge
A_DETOUR = _ACT.field("detour").offset
A_CELL = _ACT.field("cell").offset  # + cell (double-6 detour target, or new place of a stack)
A_ACCEPT = _ACT.field("accept").offset
A_DECLINE = _ACT.field("decline").offset
A_DELIVER = _ACT.field("deliver").offset  # + order type that goes to the very bottom
NUM_ACTIONS = _ACT.size

# ----------------------------------------------------------------------------- dtypes

CFG_DTYPE = np.dtype(
    [
        ("num_players", np.int64),  # N (K1)
        ("shaping", np.bool_),  # pay star points and bubble bonus as scored (C2 option)
        ("max_rounds", np.int64),  # K9's cap: truncate after this many rounds (0: none)
        ("horizon", np.int64),  # the envs' move limit, moves of the whole game (0: none)
        ("num_tiles", np.int64),  # tiles in the tile set (K2); tile ids 0..num_tiles-1
        ("tile_kind", np.int8, MAX_TILES),  # per tile id: PICKUP, CHARGING or BUILDING
        ("tile_pat", np.int8, MAX_TILES),  # per tile id: its pattern (index into conn)
        ("tile_addr", np.int8, MAX_TILES),  # per tile id: its address 0-4, -1 unless a building
        ("n_kind", np.int64, 3),  # per kind: how many tiles of the set have it
        ("kind_ids", np.uint8, (3, MAX_TILES)),  # per kind: the ids of its tiles, n_kind long
        # [pattern, rotation, edge]: the edge that path end leads to inside the tile, or
        # CENTRE (tiles.Pattern.conn)
        ("conn", np.int8, (MAX_PATTERNS, 4, 4)),
        # [cell, edge]: where leaving the cell by that edge enters next, cell * 4 + edge (K3)
        ("exit_to", np.int16, (NCELLS, 4)),
        ("perms", np.int8, (NPERMS, SIDE)),  # K4: the permutations of 0-4 (a stack's column by row)
        # [cell code]: the observation's first CELL_TILE_F entries of a cell with that code,
        # byte k of the value (little-endian; byte 7 is 0): code = kind << 4 | bit e set
        # when edge e leads to the spot (record field ``code``; observe.put8 writes it)
        ("feat64", np.uint64, FEAT_CODES),
        # per tile id: its code at rotation 0 (a spare's observation features)
        ("tile_code", np.uint8, MAX_TILES),
        # [cell]: its row one-hot (5 bytes) then column one-hot (5 bytes), as bytes 0-7
        # (``rc_lo``) and 8-9 (``rc_hi``) of little-endian words
        # (entry NO_DRIVE: zeros); ``keep``: all ones per cell, 0 at NO_DRIVE (a mask read
        # from memory, so the compiler cannot turn it into a branch)
        ("rc_lo", np.uint64, NCELLS + 1),
        ("rc_hi", np.uint64, NCELLS + 1),
        ("keep", np.uint64, NCELLS + 1),
        # [bits]: the 5 bits (1 << type) as bytes 0-4 of a little-endian word
        ("bit_bytes", np.uint64, 1 << NTYPES),
        # observation offsets (obs_layout); uint32 so that the compiler knows them
        # non-negative (a signed index costs a negative-index check per store)
        *[(f"ob_{name}", np.uint32) for name in OBS_FIELDS],
    ],
    align=True,
)

RECORD_DTYPE = np.dtype(
    [
        ("rng_key", np.uint64),  # the game's generator (C1)
        ("rng_ctr", np.uint64),
        ("moves", np.int32),  # decisions made (kept by the drivers, for truncation)
        ("reward", np.float32, MAX_PLAYERS),  # this step's reward per seat
        ("round", np.int32),  # rounds completed (K9)
        ("cur", np.int8),  # the seat to move
        ("phase", np.int8),  # HONK .. DELIVER: the decision the mover faces
        ("over", np.uint8),  # 1 once the game has ended (K9)
        ("trigger", np.uint8),  # 1 once a player ended a turn with END_STARS stars (K9)
        ("start", np.int8),  # the mover's cell at the start of this turn (K6, K7)
        ("marker", np.int8),  # the manipulation marker's cell, -1 off the board (K5)
        ("pending", np.int8),  # ACCEPT/PLACE: the order type of the stack here, else -1
        ("forced_n", np.int8),  # dice queued in ``forced``
        ("dice", np.int8, 2),  # the last detour's column and row dice (0, 0 before any)
        ("forced", np.int8, MAX_FORCED),  # dice to use before the generator's, first first
        ("cell_tile", np.uint8, NCELLS),  # per cell: the tile id lying there
        ("cell_rot", np.uint8, NCELLS),  # per cell: its rotation, quarter turns clockwise
        # derived cache: per cell, conn at its tile and rotation (board.set_links)
        ("links", np.int8, (NCELLS, 4)),
        ("code", np.uint8, NCELLS),  # derived cache: per cell, kind << 4 | spot bits
        # derived cache: per cell and edge, the cell where a drive out of it parks (K6,
        # board.trace), NO_DRIVE if that edge does not lead to the spot or its path comes
        # back to the same cell (board.update_drive_to); also the set-up's work space
        # (shuffles) before board.refresh derives it
        ("drive_to", np.int8, (NCELLS, 4)),
        # derived cache: where each exit of the mover's tile parks, -1 if not a legal drive
        # (K6; valid in the honk and drive phases, board.refresh_dest)
        ("dest", np.int8, 4),
        ("spare", np.uint8, MAX_PLAYERS),  # per seat: its spare tile id, NO_SPARE if no seat
        ("pos", np.int8, MAX_PLAYERS),  # per seat: its moped's cell, -1 if no seat
        ("energy", np.int8, MAX_PLAYERS),  # per seat: 0..MAX_ENERGY
        ("bubbles", np.int8, MAX_PLAYERS),  # per seat: speech bubbles taken, 0..MAX_BUBBLES
        ("nheld", np.int8, MAX_PLAYERS),  # per seat: orders in its phone (0-2)
        ("held", np.uint8, (MAX_PLAYERS, NTYPES)),  # per seat and type: 1 if it holds one
        ("delivered", np.uint8, (MAX_PLAYERS, NTYPES)),  # per seat and type: orders delivered
        ("stars", np.uint8, (MAX_PLAYERS, NSLOTS)),  # per seat and pile: star tokens taken
        ("nstars", np.int8, MAX_PLAYERS),  # per seat: star tokens in all
        ("points", np.int16, MAX_PLAYERS),  # per seat: their value in all
        ("passengers", np.int8, MAX_PLAYERS),  # per seat: Ibu + Bapak delivered (tie-break)
        ("stack_cell", np.int8, NTYPES),  # per type: its stack's cell, -1 once empty
        ("stack_n", np.int8, NTYPES),  # per type: tokens left in its stack
        ("ord_slot", np.int8, NSLOTS),  # K8: order type in each order slot, top first
        ("addr_slot", np.int8, NSLOTS),  # K8: address in each address slot, top ("out") first
        ("addr_cell", np.int8, NADDR),  # per address: its building's cell (fixed all game)
        ("star_left", np.int8, NSLOTS),  # per star pile (order slot): tokens left
        ("winner", np.uint8, MAX_PLAYERS),  # per seat: 1 if it won (shared wins allowed)
    ],
    align=True,
)
