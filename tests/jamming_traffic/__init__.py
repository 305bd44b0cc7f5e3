"""Jamming Traffic: its rules, env, layout, observation, greedy player and regressions;
``positions.py`` draws positions."""
