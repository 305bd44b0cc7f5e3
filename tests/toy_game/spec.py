"""The game's manifest: the one place it is declared (``trafficenvs/core/spec.py``).

In a copy inside the package, replace ``toy_game`` by ``trafficenvs.<your_game>`` and the
registry finds the game by itself; a game outside the package joins with
``trafficenvs.register_game(SPEC)``.
"""

from trafficenvs.core.spec import GameSpec

SPEC = GameSpec(
    name="toll_gate",
    version=0,
    title="Toll Gate",
    summary="wave 1 to 3 cars through a toll gate; whoever waves the last car through wins",
    game="toy_game.game:TollGateGame",
    verbs="toy_game.verbs",
    greedy="toy_game.strategy.greedy:TollGateGreedy",
    bench_options={"num_players": 2},
    doc_options={"num_players": 2},
    rules_page=None,
)
