"""Turning a benchmark JSON into a text table, a markdown table, a plot, the README.

``python -m benchmarks.report [benchmarks/results/throughput.json]`` rewrites the
README's table between ``<!-- bench:start -->`` and ``<!-- bench:end -->``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tabulate import tabulate

START, END = "<!-- bench:start -->", "<!-- bench:end -->"


def _m(x: float) -> str:
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.1f} k"


def _x(ratio: float | None, span: list[float] | None = None) -> str:
    if ratio is None:
        return "n/a"
    return f"{ratio:.2f}x" + (f" ({span[0]:.2f}-{span[1]:.2f})" if span else "")


def _vec(game: dict, batch: int, threads: int) -> dict | None:
    for v in game["vector"]:
        if v["batch"] == batch and v["threads"] == threads:
            return v
    return None


def _range(d: dict, kind: str) -> str:
    r = d.get("range", {}).get(kind)
    return f"({_m(r[0])}-{_m(r[1])})" if r else ""


def headline(result: dict[str, Any], name: str) -> dict[str, Any]:
    """The figures the targets speak of, for one game."""
    g = result["games"][name]
    peers = result["peers"]
    c4 = peers.get("connect_four_v3")
    pgx = peers.get("pgx_connect_four")
    best = max(g["vector"], key=lambda v: (v["batch"] == 4096, v["threads"]))
    out = {"vec_4096": best["env_steps_per_s"], "vec_threads": best["threads"],
           "vec_batch": best["batch"], "kernel_4096": best["kernel_steps_per_s"],
           "aec_env": g["aec"]["env()"], "aec_raw": g["aec"]["raw"],
           "nojit": g["nojit"]["env_steps_per_s"]}
    if c4:
        out["aec_vs_c4"] = g["aec"]["env()"] / c4["env()"]
    h2h = result.get("head_to_head")
    if h2h and name in h2h["games"] and h2h["batch"] == best["batch"]:
        # the two timed in alternating windows: the figure the targets speak of
        r = h2h["games"][name]["ratio"]
        out["vec_vs_pgx"] = r["median"]
        out["vec_vs_pgx_range"] = [r["min"], r["max"]]
    elif pgx and str(best["batch"]) in pgx["batches"]:
        out["vec_vs_pgx"] = best["env_steps_per_s"] / pgx["batches"][str(best["batch"])][
            "steps_per_s"]
    bw = result["bandwidth"]["copy_gib_per_s"] * 2**30
    out["obs_mask_share_of_copy_bw"] = best["env_steps_per_s"] * g["sizes"][
        "obs_mask_bytes_per_step"] / bw
    return out


def text_table(result: dict[str, Any], tablefmt: str = "simple") -> str:
    """The whole run for a terminal: the machine and the peers, then per game its
    sizes, start-up, AEC loop, pure-Python rate, memory and a table of the vectorised
    env by batch and threads (median and the runs' range).

    The table is rendered by tabulate in ``tablefmt`` (``"simple"``: aligned columns
    under a rule; any tabulate format, e.g. ``"pipe"`` to paste it in a page); the
    figures are formatted here, so every format shows the same digits.
    """
    m = result["machine"]
    lines = [f"{m['date']}  {m['cpu']}  {m['cores']} cores  numba {m['numba']} "
             f"({m['threading_layer']})  copy {result['bandwidth']['copy_gib_per_s']:.1f} GiB/s"]
    c4 = result["peers"].get("connect_four_v3")
    if c4:
        lines.append(f"PettingZoo connect_four_v3 AEC: env() {c4['env()']:,.0f}/s  "
                     f"raw {c4['raw']:,.0f}/s")
    pgx = result["peers"].get("pgx_connect_four")
    if pgx:
        for b, v in pgx["batches"].items():
            lines.append(f"pgx connect_four batch {b}: {v['steps_per_s']:,.0f}/s "
                         f"(compile {v['compile_s']:.1f} s)")
    h2h = result.get("head_to_head")
    if h2h:
        lines.append(f"against pgx at batch {h2h['batch']}, alternating windows (pgx "
                     f"{_m(h2h['pgx']['median'])}/s): " + ", ".join(
                         f"{g} {_x(d['ratio']['median'], [d['ratio']['min'], d['ratio']['max']])}"
                         for g, d in h2h["games"].items()))
    tr = result.get("training")
    if tr:
        r = tr["routes"]
        lines.append(f"MaskablePPO on {tr['game']} (2 players), learner decisions/s: ours "
                     f"{r['trafficenvs_vecenv']['learner_steps_per_s']:,.0f}, PettingZoo tutorial "
                     f"route {r['pettingzoo_tutorial']['learner_steps_per_s']:,.0f} "
                     f"({tr['speedup']:.1f}x)")
    for name, g in result["games"].items():
        s = g["sizes"]
        lines.append("")
        lines.append(f"== {name} {g['options']}: record {s['record_bytes']} B, "
                     f"obs+mask {s['obs_mask_bytes_per_step']} B/step")
        st = g["startup"]
        cold = f"cold {st['cold']['total_s']:.1f} s, " if "cold" in st else ""
        lines.append(f"start-up (import + first steps): {cold}warm {st['warm']['total_s']:.2f} s")
        aec = [[f"AEC {kind}", f"{g['aec'][kind]:,.0f}/s", _range(g["aec"], kind),
                *([f"({g['aec'][kind] / c4[kind]:.2f}x connect_four_v3)"] if c4 else [])]
               for kind in ("env()", "raw")]
        lines.append(tabulate(aec, tablefmt="plain", disable_numparse=True,
                              colalign=("left", "right", "left", "left")))
        lines.append(f"pure Python (NUMBA_DISABLE_JIT=1, batch 8): "
                     f"{g['nojit']['env_steps_per_s']:,.0f}/s")
        if "memory" in g:
            mem = g["memory"]
            lines.append(f"memory at batch {mem['batch']}: env arrays "
                         f"{mem['env_buffers_mib']:.0f} MiB, resident +{mem['env_rss_mib']:.0f} "
                         f"MiB, process peak {mem['peak_rss_mib']:.0f} MiB")
        vec = []
        for v in g["vector"]:
            lo, hi = v.get("env_range", (v["env_steps_per_s"],) * 2)
            vec.append([str(v["batch"]), str(v["threads"]), f"{v['env_steps_per_s']:,.0f}",
                        f"{_m(lo)}-{_m(hi)}", f"{v['kernel_steps_per_s']:,.0f}"])
        lines.append(tabulate(vec, headers=["batch", "threads", "env steps/s", "(min-max)",
                                            "kernel-only"],
                              tablefmt=tablefmt, disable_numparse=True,
                              colalign=("right", "right", "right", "center", "right")))
        sm = g.get("shared_machine")
        if sm:
            r = sm["ratio_2t_1t_loaded"]
            k = sm["kept_under_load"]
            lines.append("one core busy: 2 threads / 1 thread "
                         + ", ".join(f"batch {b} {x:.2f}" for b, x in r.items())
                         + " (idle: " + ", ".join(f"{x:.2f}" for x in
                                                   sm["ratio_2t_1t_idle"].values())
                         + f"); kept under load: batch 1 {k['vec 1']:.2f}, "
                           f"AEC env() {k['aec env()']:.2f}")
    return "\n".join(lines)


def _mr(v: dict, key: str = "env") -> str:
    """A vectorised figure as ``median (min-max)``."""
    lo, hi = v.get(f"{key}_range", (None, None))
    med = v[f"{key}_steps_per_s"]
    return f"{_m(med)}/s ({_m(lo)}-{_m(hi)})" if lo is not None else f"{_m(med)}/s"


def markdown_table(result: dict[str, Any], tablefmt: str = "pipe") -> str:
    """The README's tables: throughput (medians with the runs' range), and, when the
    run has it, the shared-machine figure, then a note on the machine and the peers.

    Rendered by tabulate in ``tablefmt``: ``"pipe"`` is the Markdown the README shows
    (aligned in its source too); another tabulate format (``"simple"``) gives the same
    cells as plain text.
    """
    m = result["machine"]
    c4 = result["peers"].get("connect_four_v3")
    pgx = result["peers"].get("pgx_connect_four")
    table = []
    for name, g in result["games"].items():
        h = headline(result, name)
        best = max(g["vector"], key=lambda v: (v["batch"] == 4096, v["threads"]))
        warm = g["startup"]["warm"]["total_s"]
        table.append([
            name, _mr(best), f"{_m(h['kernel_4096'])}/s",
            _x(h.get("vec_vs_pgx"), h.get("vec_vs_pgx_range")),
            f"{_m(h['aec_env'])}/s {_range(g['aec'], 'env()')}",
            _x(h.get("aec_vs_c4")), f"{_m(h['nojit'])}/s",
            f"{g['sizes']['record_bytes']} B", f"{g['sizes']['obs_mask_bytes_per_step']} B",
            f"{100 * h['obs_mask_share_of_copy_bw']:.0f}%", f"{warm:.2f} s",
        ])
    rows = [tabulate(table, headers=[
        "game", "vectorised env, batch 4096, 2 threads", "kernel-only", "vs pgx connect four",
        "AEC `env()`", "vs PettingZoo connect four", "pure Python", "record",
        "obs + mask per step", "of copy bandwidth", "start-up warm"],
        tablefmt=tablefmt, disable_numparse=True, colalign=["left"] * 11)]
    loaded = [(n, g["shared_machine"]) for n, g in result["games"].items()
              if "shared_machine" in g]
    if loaded:
        table = []
        for name, sm in loaded:
            ld = sm["loaded"]
            r = sm["ratio_2t_1t_loaded"]
            k = sm["kept_under_load"]
            table.append([
                name, f"{_m(ld['vec 64 x1']['median'])} / {_m(ld['vec 64 x2']['median'])}",
                f"{r['64']:.2f}",
                f"{_m(ld['vec 4096 x1']['median'])} / {_m(ld['vec 4096 x2']['median'])}",
                f"{r['4096']:.2f}", ", ".join(f"{x:.2f}" for x in sm["ratio_2t_1t_idle"].values()),
                f"{k['vec 1']:.2f}", f"{k['aec env()']:.2f}",
            ])
        rows += ["", "With one core kept busy by a process the harness starts (medians; "
                 "1 and 2 threads alternate):", "",
                 tabulate(table, headers=[
                     "game", "batch 64: 1 / 2 threads", "2 / 1", "batch 4096: 1 / 2 threads",
                     "2 / 1", "idle 2 / 1 (batch 64, 4096)", "batch 1 kept", "AEC `env()` kept"],
                     tablefmt=tablefmt, disable_numparse=True,
                     colalign=("left", "left", "right", "left", "right", "right", "right",
                               "right"))]
    peers = []
    if c4:
        peers.append(f"PettingZoo `connect_four_v3` AEC `env()` loop {_m(c4['env()'])}/s")
    if pgx:
        peers.append("pgx connect four " + ", ".join(
            f"batch {b}: {_m(v['steps_per_s'])}/s" for b, v in pgx["batches"].items()))
    h2h = result.get("head_to_head")
    if h2h:
        p = h2h["pgx"]
        peers.append(
            f"\"vs pgx\" is the median of {len(p['runs'])} rounds, each timing pgx at batch "
            f"{h2h['batch']} ({_m(p['median'])}/s, {_m(p['min'])}-{_m(p['max'])} over the "
            f"rounds) and then each game's env, the ratio per round (range in brackets)")
    tr = result.get("training")
    if tr:
        r = tr["routes"]
        peers.append(
            f"MaskablePPO training on {tr['game']} (2 players, rollout {tr['ppo']['rollout']}, "
            f"minibatch {tr['ppo']['batch_size']}, {tr['ppo']['n_epochs']} epochs): "
            f"{r['trafficenvs_vecenv']['learner_steps_per_s']:,.0f} learner steps/s with our "
            f"VecEnv vs {r['pettingzoo_tutorial']['learner_steps_per_s']:,.0f} by PettingZoo's "
            f"tutorial route ({tr['speedup']:.1f}x)")
    load = result.get("load_before")
    reps = result.get("repeats", 1)
    note = (f"\n\nMeasured {m['date']} on {m['cpu']} ({m['cores']} cores), Python "
            f"{m['python']}, numba {m['numba']} ({m['threading_layer']} layer); every figure "
            f"the median of {reps} timed runs of {result['seconds_per_figure']:g} s, the "
            f"range in brackets"
            + (f"; load average {load[0]:.2f} at the start" if load else "")
            + (f", whole run {result['wall_s']:.0f} s" if "wall_s" in result else "")
            + "; same run: " + "; ".join(peers) + ".")
    return "\n".join(rows) + note


def plot(result: dict[str, Any], path: Path) -> Path | None:
    """Steps/s against batch size per game and thread count, with the peers."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, g in result["games"].items():
        for t in sorted({v["threads"] for v in g["vector"]}):
            vs = [v for v in g["vector"] if v["threads"] == t]
            ax.plot([v["batch"] for v in vs], [v["env_steps_per_s"] for v in vs], marker="o",
                    label=f"{name}, {t} thread{'s' if t > 1 else ''}")
    pgx = result["peers"].get("pgx_connect_four")
    if pgx:
        bs = sorted(int(b) for b in pgx["batches"])
        ax.plot(bs, [pgx["batches"][str(b)]["steps_per_s"] for b in bs], "k--", marker="s",
                label="pgx connect four (JAX CPU)")
    c4 = result["peers"].get("connect_four_v3")
    if c4:
        ax.axhline(c4["env()"], color="grey", ls=":", label="PettingZoo connect_four_v3 AEC")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("batch (games stepped together)")
    ax.set_ylabel("steps per second (observation + mask every step)")
    ax.set_title(f"trafficenvs throughput, {result['machine']['cores']} cores")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def update_readme(json_path: Path, readme: Path = Path("README.md")) -> None:
    result = json.loads(json_path.read_text())
    text = readme.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"{readme} has no {START} ... {END} block")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(f"{head}{START}\n{markdown_table(result)}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0]) if argv else Path("benchmarks/results/throughput.json")
    update_readme(path)
    print(f"README table updated from {path}")
    return 0
