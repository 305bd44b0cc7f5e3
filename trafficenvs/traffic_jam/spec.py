"""Traffic Jam's manifest: the one place the game is declared (see ``core/spec.py``)."""

from trafficenvs.core.spec import GameSpec

SPEC = GameSpec(
    name="traffic_jam",
    version=1,
    title="Traffic Jam",
    summary="hidden, simultaneous card plays onto morning, day and night roads, scored by "
            "whether each road jams",
    game="trafficenvs.traffic_jam.game:TrafficJamGame",
    kernels="trafficenvs.traffic_jam.kernels",
    greedy="trafficenvs.traffic_jam.greedy:TrafficJamGreedy",
    bench_options={"num_players": 4},
    doc_options={"num_players": 4},
    rules_page="docs/rules/traffic_jam.md",
)
