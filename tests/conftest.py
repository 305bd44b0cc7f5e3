"""Shared fixtures: nothing global; each game's folder has a ``positions.py`` that draws
its positions."""
