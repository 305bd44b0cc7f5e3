"""Shared machinery of every game: RNG, kernel verbs, batched drivers, adapters."""
