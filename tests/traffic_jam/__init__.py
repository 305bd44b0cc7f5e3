"""Traffic Jam: its rules, env, layout, observation, parallel env and determinization;
``positions.py`` draws positions."""
