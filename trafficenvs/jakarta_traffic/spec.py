"""Jakarta Traffic's manifest: the one place the game is declared (see ``core/spec.py``)."""

from trafficenvs.core.spec import GameSpec, SearchPreset

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
    # what the bare search names play; their figures: benchmarks/results/search.json
    # (python -m benchmarks.search, 2 players against greedy, one numba thread)
    search_presets={
        "flatmc": SearchPreset(
            "flatmc:n=2,depth=4,rollout=greedy",
            vs_greedy=0.9105, games=1000, ms_per_decision=14.5),
        "mcts": SearchPreset(
            "mcts:sims=64,depth=4,rollout=greedy,top=8",
            vs_greedy=0.7025, games=200, ms_per_decision=9.8),
        "gumbel": SearchPreset(
            "gumbel:n=128,nper=2,m=32,depth=4,rollout=greedy,c_scale=2,gscale=0,bonus=8,beta=1",
            vs_greedy=0.9667, games=300, ms_per_decision=9.6),
    },
)
