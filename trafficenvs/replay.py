"""Pictures of games for people: notebook display and animated replays.

``record_gif("traffic_jam", ["greedy", "random"], "game.gif", seed=3)`` plays one game
between any agents (the arena's specs: ``random``, ``greedy``, ``ppo:PATH``,
``mcts:sims=200``...) and writes an animated GIF with one frame per position: the
start and the position after every move, with a strip under each frame saying which
move led to it (as the table saw it: a Traffic Jam pick stays face down).
``trafficenvs replay`` is its command line.

``Picture(game, record, seat)`` (or :func:`picture` of an env) shows one position in
a notebook: Jupyter calls its ``_repr_png_``. The env classes delegate their own
``_repr_png_`` to :func:`env_png`, so a cell ending in ``env`` draws the board.

Every picture is the game's own ``rgb_array`` render, so it shows only what ``seat``
may see (``None``: a spectator, who sees no hidden hand).
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from trafficenvs.agents.policy import Policy, act_aec
from trafficenvs.core.game import Game

AgentLike = str | Policy


def png_bytes(image: np.ndarray) -> bytes:
    """An ``(H, W, 3)`` uint8 picture as PNG bytes (what notebooks display)."""
    buf = io.BytesIO()
    Image.fromarray(np.asarray(image, np.uint8)).save(buf, format="PNG", optimize=False)
    return buf.getvalue()


class Picture:
    """One position of one game, drawn on demand (a notebook cell displays it).

    Holds a copy of the record, so later moves of the env do not change a picture
    already shown. ``seat`` is whose hidden cards may be drawn (``None``: nobody's).
    """

    def __init__(self, game: Game, record: np.void | np.ndarray, seat: int | None = None):
        rec = np.array(record, copy=True).reshape(-1)
        if rec.dtype.names != game.record_dtype.names or len(rec) != 1:
            raise TypeError(f"record must be one {game.name} record, got {rec.dtype} "
                            f"of shape {rec.shape}")
        if seat is not None and not (isinstance(seat, (int, np.integer))
                                     and 0 <= int(seat) < game.num_players):
            raise ValueError(f"seat must be in 0..{game.num_players - 1} or None, got {seat!r}")
        self.game = game
        self.record = rec
        self.seat = None if seat is None else int(seat)

    @classmethod
    def from_state(cls, game: Game, state: dict[str, Any], seat: int | None = None) -> Picture:
        """The picture of a state dict (validated by the game's ``from_dict``)."""
        return cls(game, game.from_dict(state), seat)

    def rgb(self) -> np.ndarray:
        """The picture as an ``(H, W, 3)`` uint8 array."""
        return self.game.render_rgb(self.record[0], self.seat)

    def image(self) -> Image.Image:
        """The picture as a PIL image (``.save(path)`` to keep it)."""
        return Image.fromarray(self.rgb())

    def text(self) -> str:
        """The same position as the game's text render."""
        return self.game.render_ansi(self.record[0], self.seat)

    def _repr_png_(self) -> bytes:
        return png_bytes(self.rgb())

    def __repr__(self) -> str:
        return f"Picture({self.game.env_id()}, seat={self.seat})\n{self.text()}"


def picture(env: Any, i: int = 0, seat: int | None = None) -> Picture:
    """The current position of an AEC env (wrapped or not; its ``render_seat`` unless
    ``seat`` is given) or of row ``i`` of a vectorised env."""
    base = getattr(env, "unwrapped", env)
    if hasattr(base, "records"):  # the vectorised env
        recs = base.records
        if not isinstance(i, (int, np.integer)) or not 0 <= int(i) < len(recs):
            raise ValueError(f"i must be a row in 0..{len(recs) - 1}, got {i!r}")
        return Picture(base.game, recs[int(i)], seat)
    if seat is None:
        seat = getattr(base, "render_seat", None)
    return Picture(base.game, base.record, seat)


def env_png(env: Any) -> bytes | None:
    """PNG bytes of an AEC env's board for ``_repr_png_``; ``None`` before the first
    ``reset`` (a zeroed record is not a position, and Jupyter then shows the text)."""
    return getattr(env, "unwrapped", env)._repr_png_()


# ----------------------------------------------------------------------------- replays


def _agents(specs: Sequence[AgentLike] | str, game: Game, seed: int) -> list[Policy]:
    from trafficenvs.agents.zoo import make_agents, split_agent_specs

    if isinstance(specs, str):
        specs = split_agent_specs(specs)
    specs = list(specs)
    if not specs:
        raise ValueError("agents must name at least one agent, got none")
    names = [s for s in specs if isinstance(s, str)]
    built = iter(make_agents(names, game, seed=seed)) if names else iter(())
    out: list[Policy] = []
    for s in specs:
        if isinstance(s, str):
            out.append(next(built))
        elif isinstance(s, Policy):
            out.append(s)
        else:
            raise TypeError(f"an agent must be a spec string or a Policy, got {s!r}")
    return out


def play_frames(
    game: str,
    agents: Sequence[AgentLike] | str,
    seed: int = 0,
    num_players: int | None = None,
    seat: int | None = None,
    max_moves: int | None = None,
    moves: list[str] | None = None,
    **options: Any,
) -> Iterator[np.ndarray]:
    """The pictures of one game between ``agents`` (seat ``k`` plays agent
    ``k % len(agents)``): the start, then the position after each move. ``moves``,
    if given, collects "player_k (agent): move" lines as the game goes (as the table
    sees the move: a Traffic Jam pick is face down, see ``trafficenvs.play``)."""
    from trafficenvs.play import public_move
    from trafficenvs.registry import game_name, make, make_game

    name = game_name(game)
    specs = agents
    n_agents = len(specs) if not isinstance(specs, str) else None
    if num_players is None:
        probe = make_game(name, **options)
        want = n_agents if n_agents is not None else len(_agents(specs, probe, seed))
        num_players = min(max(want, probe.min_players), probe.max_players)
    env = make(name, num_players=num_players, wrapped=False, render_mode="rgb_array",
               render_seat=seat, **options)
    table = make_game(name, num_players=num_players, **options)
    players = _agents(specs, table, seed)
    limit = None if max_moves is None else int(max_moves)
    if limit is not None and limit < 0:
        raise ValueError(f"max_moves must be at least 0 or None, got {max_moves}")
    env.reset(seed=seed)
    yield env.render()
    made = 0
    while limit is None or made < limit:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            break
        k = env.possible_agents.index(agent)
        policy = players[k % len(players)]
        action = act_aec(policy, env)
        if moves is not None:
            moves.append(f"{agent} ({policy.name}): {public_move(env.game, env.record, action)}")
        env.step(action)
        made += 1
        yield env.render()


def caption(frame: np.ndarray, text: str) -> Image.Image:
    """The frame with a strip below it saying which move led to it."""
    h, w = frame.shape[:2]
    im = Image.new("RGB", (w, h + 26), (250, 250, 245))
    im.paste(Image.fromarray(frame), (0, 0))
    d = ImageDraw.Draw(im)
    try:
        f = ImageFont.load_default(size=14)  # Pillow's own font (>= 10.1), no system path
    except TypeError:  # Pillow < 10.1
        f = ImageFont.load_default()
    while text and f.getlength(text) > w - 16:
        text = text[:-2] + "\u2026"
    d.text((8, h + 5), text, fill=(20, 20, 20), font=f)
    return im


def record_gif(
    game: str,
    agents: Sequence[AgentLike] | str,
    path: str | Path,
    seed: int = 0,
    num_players: int | None = None,
    seat: int | None = None,
    fps: float = 2.0,
    max_moves: int | None = None,
    scale: float = 1.0,
    **options: Any,
) -> int:
    """Play one game of ``game`` between ``agents`` and write it to ``path`` as an
    animated GIF; returns the number of frames (moves + 1).

    ``agents`` are arena specs (``["greedy", "mcts:sims=100"]`` or
    ``"greedy,random"``) or :class:`~trafficenvs.agents.policy.Policy` objects; seat
    ``k`` plays agent ``k % len(agents)``; ``num_players`` defaults to the number of
    agents (at least the game's minimum). ``seat`` is whose hidden cards the frames
    show (``None``: nobody's). ``max_moves`` stops early; ``scale`` shrinks the frames
    (0.5 halves them, for smaller files). Game options (``map=``, ``deck=``...) pass
    through to the env.
    """
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps!r}")
    if not 0 < scale <= 4:
        raise ValueError(f"scale must be in (0, 4], got {scale!r}")
    count = 0
    said: list[str] = []

    def images() -> Iterator[Image.Image]:
        nonlocal count
        for frame in play_frames(game, agents, seed=seed, num_players=num_players, seat=seat,
                                 max_moves=max_moves, moves=said, **options):
            im = caption(frame, f"move {count}: {said[-1]}" if count else "the start")
            if scale != 1.0:
                im = im.resize((max(1, round(im.width * scale)), max(1, round(im.height * scale))),
                               Image.Resampling.LANCZOS)
            count += 1
            # one adaptive palette per frame: the renders use few flat colours
            yield im.quantize(colors=255, method=Image.Quantize.FASTOCTREE,
                              dither=Image.Dither.NONE)

    frames = images()
    first = next(frames)
    path = Path(path)
    # the caption numbers the moves, so no two frames are equal and Pillow merges none:
    # frame k is always the position after k moves
    first.save(path, format="GIF", save_all=True, append_images=frames,
               duration=round(1000 / fps), loop=0, optimize=False, disposal=1)
    return count
