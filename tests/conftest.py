"""Shared fixtures: nothing global; see tj_positions.py for Traffic Jam positions."""
