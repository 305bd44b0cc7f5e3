"""The benchmarks: the CPU bench, pgx's figures and the GPU script (under the simulator)."""
