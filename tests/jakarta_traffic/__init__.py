"""Jakarta Traffic: its rules, env, layout, observation, state dicts, search, plan features
and greedy player; ``positions.py`` draws positions."""
