"""Jamming Traffic's manifest: the one place the game is declared (see ``core/spec.py``)."""

from trafficenvs.core.spec import GameSpec, SearchPreset

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
    # what the bare search names play; their figures: benchmarks/results/search.json
    # (python -m benchmarks.search, 2 players against greedy, one numba thread)
    search_presets={
        "flatmc": SearchPreset(
            "flatmc:n=4,depth=200,turns=1,rollout=greedy,top=6",
            vs_greedy=0.775, games=1000, ms_per_decision=4.5),
        "mcts": SearchPreset(
            "mcts:sims=28,depth=200,turns=1,rollout=greedy,top=6",
            vs_greedy=0.5033, games=300, ms_per_decision=4.9),
        "gumbel": SearchPreset(
            "gumbel:n=28,m=7,depth=200,turns=1,rollout=greedy,beta=3,gscale=0,bonus=8,c_scale=2",
            vs_greedy=0.769, games=1000, ms_per_decision=3.8),
    },
)
