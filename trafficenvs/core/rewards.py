"""Ruling C2: zero-sum final rewards, shared by every game kernel."""

from __future__ import annotations

from trafficenvs.core.jit import kernel


@kernel
def write_zero_sum(reward, winner, n):
    """Add C2's result to ``reward[:n]`` given ``winner[:n]`` flags.

    With n players and k winners, player i gets ``n/(n-1) * (w_i/k - 1/n)``:
    a lone winner +1, each loser -1/(n-1), an all-way tie 0. The result sums to 0.
    """
    k = 0
    for i in range(n):
        if winner[i]:
            k += 1
    if k == 0 or k == n:
        return
    scale = n / (n - 1.0)
    for i in range(n):
        w = 1.0 / k if winner[i] else 0.0
        reward[i] += scale * (w - 1.0 / n)
