"""``python -m benchmarks.gpu [--tiny] [--device cuda:K]``: see trafficenvs/bench/gpu.py."""

from trafficenvs.bench.gpu import main

if __name__ == "__main__":
    raise SystemExit(main())
