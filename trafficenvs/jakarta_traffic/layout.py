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

The observation's length depends on the player count only (one block per seat); its
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
NTYPES = 5  # order types (Bakso .. Bapak)
NADDR = 5  # delivery addresses, one building each
NSLOTS = 5  # K8: order slots = address slots = star piles
MAX_FORCED = 16  # dice a state dict may queue (``forced_dice``)
CENTRE = 4  # a path end that leads to the tile's parking spot (not an edge 0-3)
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
#: the observation's round entry stops counting here (``obs_high``)
OBS_ROUND_CAP = 100

# ----------------------------------------------------------------------------- observation
CELL_PARTS = (
    Part("ends", 4, "path ends N, E, S, W leading to the spot (0/1 each)"),
    Part("charging", 1, "charging station"),
    Part("building", 1, "building"),
    Part("stack", 1, "order-stack size here"),
    Part("marker", 1, "marker here"),
    Part("me", 1, "my moped here"),
    Part("others", 1, "number of competitors' mopeds here"),
)
PLAYER_PARTS = (
    Part("row", 1, "moped row"),
    Part("col", 1, "moped column"),
    Part("energy", 1, "energy"),
    Part("bubbles", 1, "speech bubbles"),
    Part("stars", 1, "star tokens"),
    Part("points", 1, "star points"),
    Part("passengers", 1, "passengers delivered"),
    Part("holds", NTYPES, "holds type t (0/1 each)"),
    Part("spare_ends", 4, "spare tile's path ends N, E, S, W at rotation 0"),
    Part("spare_charging", 1, "spare is a charging station"),
)
TYPE_PARTS = (
    Part("pays", 1, "stars a delivery would pay now"),
    Part("addr_row", 1, "current address's row"),
    Part("addr_col", 1, "current address's column"),
    Part("stack_n", 1, "stack size"),
    Part("stack_row", 1, "stack row (0 when no stack)"),
    Part("stack_col", 1, "stack column (0 when no stack)"),
)


def obs_layout(num_players: int) -> Layout:
    """The observation row of a seat (C4: seats from the observer's on), ``N`` players."""
    N = num_players
    return Layout("Jakarta Traffic observation", [
        block("cells", NCELLS, CELL_PARTS, "per cell x = row * 5 + col", "25 * 10"),
        block("players", N, PLAYER_PARTS, "per seat, me first, then the others in turn order",
              "17 N"),
        block("types", NTYPES, TYPE_PARTS, "per order type t (Bakso, Nasi Goreng, Sate, Ibu, "
              "Bapak)", "5 * 6"),
        Field("phase", NPHASES, "phase one-hot (" + ", ".join(PHASES) + ")"),
        Field("end_triggered", 1, "end triggered (last round)"),
        Field("round", 1, f"rounds completed (capped at {OBS_ROUND_CAP})"),
        Field("marker_off", 1, "the marker is off the board"),
        Field("star_piles", NSLOTS, "stars left per order slot, top first"),
        Field("dice", 2, "the last detour's dice, column then row (0 before any)"),
    ])


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
CELL_CHARGING = _CELL["charging"]
CELL_BUILDING = _CELL["building"]
CELL_STACK = _CELL["stack"]
CELL_MARKER = _CELL["marker"]
CELL_ME = _CELL["me"]
CELL_OTHERS = _CELL["others"]
#: entries of a cell that come from its tile alone (``cfg.feat[code]``)
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
PL_HOLDS = _PL["holds"]
PL_SPARE_ENDS = _PL["spare_ends"]
PL_SPARE_CHARGING = _PL["spare_charging"]

_TY = part_offsets(TYPE_PARTS)
TYPE_F = _OB2.field("types").stride  # entries per order type
TY_PAYS = _TY["pays"]
TY_ADDR_ROW = _TY["addr_row"]
TY_ADDR_COL = _TY["addr_col"]
TY_STACK_N = _TY["stack_n"]
TY_STACK_ROW = _TY["stack_row"]
TY_STACK_COL = _TY["stack_col"]

#: entries after the order types (phase .. dice)
GLOBAL_F = _OB2.size - _OB2.field("phase").offset


def obs_dim(num_players: int) -> int:
    """Length of one observation row: the layout's size, ``25*10 + 17N + 30 + 16``."""
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
        # [cell code]: the observation's first CELL_TILE_F entries of a cell with that code
        # (code = kind << 4 | bit e set when edge e leads to the spot; record field ``code``)
        ("feat", np.float32, (FEAT_CODES, CELL_TILE_F)),
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
        ("scratch", np.uint8, MAX_TILES),  # kernel work space (set-up shuffles), not state
    ],
    align=True,
)
