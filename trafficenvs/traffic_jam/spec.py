"""Traffic Jam's manifest: the one place the game is declared (see ``core/spec.py``)."""

from trafficenvs.core.spec import GameSpec, SearchPreset

SPEC = GameSpec(
    name="traffic_jam",
    version=1,
    title="Traffic Jam",
    summary="hidden, simultaneous card plays onto morning, day and night roads, scored by "
            "whether each road jams",
    game="trafficenvs.traffic_jam.game:TrafficJamGame",
    verbs="trafficenvs.traffic_jam.verbs",
    greedy="trafficenvs.traffic_jam.strategy.greedy:TrafficJamGreedy",
    bench_options={"num_players": 4},
    doc_options={"num_players": 4},
    rules_page="docs/rules/traffic_jam.md",
    # 2 threads against 1, random play with observations, 4 players, idle 2-core Intel
    # Xeon (2026-12-04): 0.84x at batch 256, 0.96x at 512, 1.30x at 1024
    parallel_from=1024,
    # what the bare search names play; their figures: benchmarks/results/search.json
    # (python -m benchmarks.search, 2 players against greedy, one numba thread)
    search_presets={
        "flatmc": SearchPreset(
            "flatmc:n=32,rollout=greedy",
            vs_greedy=0.6635, games=1000, ms_per_decision=8.9),
        "mcts": SearchPreset(
            "mcts:sims=200,rollout=greedy",
            vs_greedy=0.575, games=300, ms_per_decision=6.8),
        "gumbel": SearchPreset(
            "gumbel:n=640,nper=32,m=20,rollout=greedy,bonus=4,c_scale=2,gscale=0",
            vs_greedy=0.678, games=1000, ms_per_decision=5.0),
    },
)
