"""Test-session settings: notebooks run small under pytest (nbmake)."""

import os

# The notebooks read this to use fewer games and training steps; a person running
# them in Jupyter gets the full size.
os.environ.setdefault("TRAFFICENVS_NB_SMALL", "1")
