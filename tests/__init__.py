"""The tests, laid out as the package: ``core/``, one folder per game, ``agents/``, the doors
and the benchmarks; cross-game suites (conformance, play digests, the house rules, the
template game) at the top."""
