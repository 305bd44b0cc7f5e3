"""Traffic Jam's manifest: the one place the game is declared (see ``core/spec.py``)."""

from trafficenvs.core.spec import GameSpec

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
)
