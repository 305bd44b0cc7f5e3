"""Jamming Traffic's manifest: the one place the game is declared (see ``core/spec.py``)."""

from trafficenvs.core.spec import GameSpec

SPEC = GameSpec(
    name="jamming_traffic",
    version=1,
    title="Jamming Traffic",
    summary="towns and roads, cars queue three to a road, dice, roundabouts, one-way roads, "
            "jams that cascade (sometimes endlessly)",
    game="trafficenvs.jamming_traffic.game:JammingTrafficGame",
    verbs="trafficenvs.jamming_traffic.verbs",
    greedy="trafficenvs.jamming_traffic.strategy.greedy:JammingTrafficGreedy",
    bench_options={"num_players": 4},
    doc_options={"num_players": 4},
    rules_page="docs/rules/jamming_traffic.md",
)
