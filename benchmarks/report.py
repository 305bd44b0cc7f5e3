"""``python -m benchmarks.report [json]``: rewrite the README's benchmark table."""

from trafficenvs.bench.report import main

if __name__ == "__main__":
    raise SystemExit(main())
