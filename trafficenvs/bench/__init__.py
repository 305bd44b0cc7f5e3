"""Throughput benchmarks (``trafficenvs bench``); see ``run.py``."""
