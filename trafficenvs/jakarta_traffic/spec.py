"""Jakarta Traffic's manifest: the one place the game is declared (see ``core/spec.py``)."""

from trafficenvs.core.spec import GameSpec

SPEC = GameSpec(
    name="jakarta_traffic",
    version=1,
    title="Jakarta Traffic",
    summary="a 5x5 maze of rotatable tiles; mopeds trace paths between parking spots, pick up "
            "and deliver orders, manage a battery",
    game="trafficenvs.jakarta_traffic.game:JakartaTrafficGame",
    verbs="trafficenvs.jakarta_traffic.verbs",
    greedy="trafficenvs.jakarta_traffic.strategy.greedy:JakartaTrafficGreedy",
    bench_options={"num_players": 3},
    doc_options={"num_players": 4},
    rules_page="docs/rules/jakarta_traffic.md",
)
