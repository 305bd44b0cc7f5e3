"""``python -m benchmarks.throughput [game ...] [--quick]``: see trafficenvs/bench/run.py."""

from trafficenvs.bench.run import main

if __name__ == "__main__":
    raise SystemExit(main())
