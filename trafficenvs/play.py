"""``trafficenvs play``: one game in the terminal against bots.

Made for an 80x24 terminal: before each of your moves the board is printed compactly
(each game's ``render_compact``), then your moves, grouped where a game's moves have
that shape: pick a piece, card or road first, then what to do with it (a Jamming car,
then where it goes; a Jakarta tile, then how to honk it; a Traffic Jam car card,
then the surprise). Every bot move is one line in words; in Traffic Jam a bot's pick
is hidden, so the line says only that it put cards face down, and what was revealed
is reported when the cards are turned over.

Type a number (or the item's text), ``b`` to go back a level, ``r`` for a random
move, ``board`` to see the board again, ``help``, ``q`` to quit.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from trafficenvs.core.game import Game

#: more items than this are printed in columns instead of one a line
ONE_A_LINE = 10
WIDTH = 79

HELP = """Commands:
  <number>   choose that item (or type its text, e.g. r2c3 or road 5)
  b          back up one level
  r          a random legal move
  board      print the board again
  help       this text
  q          quit the game"""


@dataclass
class Node:
    """One level of the move menu: a group (children) or a move (action)."""

    label: str
    action: int | None = None
    children: list[Node] = field(default_factory=list)

    def child(self, label: str) -> Node:
        for c in self.children:
            if c.label == label:
                return c
        node = Node(label)
        self.children.append(node)
        return node

    def moves(self) -> list[int]:
        if self.action is not None:
            return [self.action]
        return [a for c in self.children for a in c.moves()]


def build_menu(paths: list[tuple[list[str], int]]) -> Node:
    """The menu tree of legal moves, each given as its path of labels (first the
    piece, then what to do with it) and its action; labels keep their first order."""
    root = Node("Your moves")
    for path, action in paths:
        node = root
        for label in path[:-1]:
            node = node.child(label)
        leaf = node.child(path[-1])
        leaf.action = action
    return root


def render_module(game: Game) -> Any:
    """The game's render module (``render.py`` beside its game module), which holds
    what ``play`` needs for people: ``render_compact``, ``menu_paths`` (how the
    game's moves group) and, for hidden moves, ``public_move`` and ``reveals``.
    None when the game has none (it is then played from plain lists)."""
    pkg = type(game).__module__.rpartition(".")[0]
    try:
        return importlib.import_module(f"{pkg}.render")
    except ImportError:
        return None


def move_menu(game: Game, rec: np.void, legal: np.ndarray) -> Node:
    """The legal moves of ``rec`` as a menu tree: grouped by the game's grouping, or
    a plain list for a game without one; a short list (at most ``ONE_A_LINE``
    moves) is never grouped, since one choice is quicker than two."""
    grouper = getattr(render_module(game), "menu_paths", None)
    if grouper is None or len(legal) <= ONE_A_LINE:
        return build_menu([([game.action_name(rec, int(a))], int(a)) for a in legal])
    return build_menu(grouper(game, rec, legal))


def format_level(node: Node, title: str) -> str:
    """A menu level: one item a line when few, else packed in columns to fit 80."""
    items = [f"{i:>2}: {c.label}" for i, c in enumerate(node.children)]
    lines = [f"{title}:"]
    if len(items) <= ONE_A_LINE:
        lines += ["  " + it for it in items]
    else:
        w = max(len(it) for it in items) + 2
        cols = max(1, (WIDTH - 2) // w)
        for i in range(0, len(items), cols):
            lines.append("  " + "".join(f"{it:<{w}}" for it in items[i:i + cols]).rstrip())
    return "\n".join(lines)


# -- what a move shows the table ---------------------------------------------------


def public_move(game: Game, rec: np.void, action: int) -> str:
    """A move in words as the other players see it: the game's own ``public_move``
    where moves are hidden (a Traffic Jam pick is face down), else its name."""
    fn = getattr(render_module(game), "public_move", None)
    return fn(game, rec, int(action)) if fn else game.action_name(rec, int(action))


def reveals(game: Game, before: np.void, after: np.void) -> list[str]:
    """What a move turned over for everyone to see (the game's ``reveals``), if any."""
    fn = getattr(render_module(game), "reveals", None)
    return fn(game, before, after) if fn else []


def _compact(game: Game) -> Callable[[np.void, int | None], str]:
    """The game's compact board (``render_compact``) or its text render."""
    fn = getattr(render_module(game), "render_compact", None)
    if fn is None:
        return game.render_ansi
    return lambda rec, seat: fn(game, rec, seat)


# -- the game ----------------------------------------------------------------------


def play(
    game: str,
    players: int,
    seat: int = 0,
    seed: int | None = None,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
    opponents: str = "random",
    **options: Any,
) -> int:
    """Play one game in the terminal against ``opponents`` (arena agent specs, comma
    list, dealt to the other seats in turn); returns 0 when the game ends or you quit."""
    from trafficenvs.agents.policy import act_aec
    from trafficenvs.agents.zoo import make_agents, split_agent_specs
    from trafficenvs.registry import game_name, make, make_game

    name = game_name(game)
    table = make_game(name, num_players=players, **options)
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) \
            or not 0 <= seat < table.num_players:
        raise ValueError(f"--seat must be in 0..{table.num_players - 1}, got {seat!r}")
    specs = split_agent_specs(opponents)
    if not specs:
        raise ValueError(f"--opponents must name at least one agent, got {opponents!r}")
    bots = make_agents(specs, table, seed=0 if seed is None else seed)
    env = make(name, num_players=players, wrapped=False, render_mode="ansi", render_seat=seat,
               **options)
    env.reset(seed=seed)
    g = env.game
    board = _compact(g)
    rng = np.random.default_rng(seed)
    me = env.possible_agents[seat]
    others = [a for a in env.possible_agents if a != me]
    bot_of = {a: bots[i % len(bots)] for i, a in enumerate(others)}
    out = stdout.write
    returns = dict.fromkeys(env.possible_agents, 0.0)
    out(f"{g.env_id()}, {players} players: you are {me}; "
        + ", ".join(f"{a} {bot_of[a].name}" for a in others) + ". Type help for help.\n")
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        returns[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        before = env.record.copy()
        if agent != me:
            action = act_aec(bot_of[agent], env)
            out(f"{agent} ({bot_of[agent].name}): {public_move(g, before, action)}\n")
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = _ask(g, before, legal, lambda: board(env.record, seat), rng, stdin, out,
                          stdout)
            if action is None:
                out("\nbye\n")
                return 0
            out(f"you: {g.action_name(before, action)}\n")
        env.step(action)
        for line in reveals(g, before, env.record):
            out(line + "\n")
    out("\n" + board(env.record, seat) + "\n")
    if any(env.truncations.values()):
        out("the game was cut off by the move limit\n")
    out("result: " + ", ".join(f"{a} {returns[a]:+.2f}" for a in env.possible_agents) + "\n")
    return 0


def _ask(game: Game, rec: np.void, legal: np.ndarray, board: Callable[[], str],
         rng: np.random.Generator, stdin: TextIO, out: Callable[[str], Any], stdout: TextIO
         ) -> int | None:
    """Your move from the menu, or None to quit (``q`` or the end of input)."""
    root = move_menu(game, rec, legal)
    stack = [root]
    out("\n" + board() + "\n")
    show = True
    while True:
        node = stack[-1]
        # a level with a single group is no choice: go straight into it
        while node.action is None and len(node.children) == 1 and node.children[0].children:
            node = node.children[0]
            stack.append(node)
        if show:
            title = "Your moves" if len(stack) == 1 else " > ".join(n.label for n in stack[1:])
            out(format_level(node, title) + "\n")
        show = False
        n = len(node.children)
        out(f"move [0-{n - 1}{', b = back' if len(stack) > 1 else ''}, help]> ")
        stdout.flush()
        line = stdin.readline()
        if not line:
            return None
        text = line.strip()
        low = text.lower()
        if low in ("q", "quit", "exit"):
            return None
        if low in ("help", "h", "?"):
            out(HELP + "\n")
            show = True
            continue
        if low in ("r", "random"):
            return int(rng.choice(legal))
        if low == "board":
            out(board() + "\n")
            show = True
            continue
        if low in ("b", "back"):
            if len(stack) > 1:
                stack.pop()
                # skip back over the levels that were entered without a choice
                while len(stack) > 1 and len(stack[-1].children) == 1:
                    stack.pop()
                show = True
            else:
                out("already at the top: choose a move\n")
            continue
        pick = None
        if text.isdigit() and int(text) < n:
            pick = node.children[int(text)]
        else:
            pick = next((c for c in node.children if c.label.lower() == low), None)
        if pick is None:
            out(f"not a move: {text!r} (type a number 0-{n - 1}, or help)\n")
            continue
        if pick.action is not None:
            return pick.action
        stack.append(pick)
        show = True
