"""The masked categorical's sampling kernel (``agents/categorical_kernels.py``).

A policy samples from ``softmax(logits)`` over the legal actions only. The kernel
takes the caller's uniforms and walks each row's running sum of legal probabilities:
these tests put the uniforms where a hand computation of that sum says which action
they fall on, check the draws' frequencies, and check the guards."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch as th

from trafficenvs.agents.categorical_kernels import sample_masked_categorical, sample_masked_rows


def _run(logits, legal, uniforms):
    logits = np.asarray(logits, np.float32)
    actions = np.zeros(len(logits), np.int64)
    logp = np.zeros(len(logits), np.float32)
    sample_masked_rows(logits, np.asarray(legal, np.bool_), np.asarray(uniforms, np.float64),
                       actions, logp)
    return actions, logp


def test_a_uniform_falls_on_the_legal_action_whose_running_sum_passes_it():
    # actions:     0      1         2      3         4         5
    # legal:       no     yes       no     yes       yes       no
    # logits:      9      log 2     9      log 1     log 1     9
    # probability: 0      0.5       0      0.25      0.25      0      (running 0.5, 0.75, 1)
    logits = [[9.0, math.log(2.0), 9.0, 0.0, 0.0, 9.0]] * 5
    legal = [[0, 1, 0, 1, 1, 0]] * 5
    actions, logp = _run(logits, legal, [0.0, 0.49, 0.51, 0.74, 0.99])
    assert actions.tolist() == [1, 1, 3, 3, 4]
    np.testing.assert_allclose(logp, np.log([0.5, 0.5, 0.25, 0.25, 0.25]), rtol=1e-6)


def test_a_uniform_past_the_last_running_sum_takes_the_last_legal_action():
    actions, _ = _run([[0.0, 0.0, 0.0, 0.0]], [[1, 1, 1, 0]], [1.0])
    assert actions.tolist() == [2]


def test_a_row_without_a_legal_action_is_refused():
    logits = th.zeros(3, 4)
    legal = th.tensor([[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 1, 1]], dtype=th.bool)
    with pytest.raises(ValueError, match=r"rows \[1\] have no legal action"):
        sample_masked_categorical(logits, legal)


def test_the_draws_follow_the_masked_softmax_and_never_an_illegal_action():
    from scipy.stats import chisquare

    rows = 200_000
    logits = th.tensor([[2.0, 0.0, 5.0, -1.0, 1.0, 9.0]]).expand(rows, -1).contiguous()
    legal = th.tensor([[True, True, False, True, True, False]]).expand(rows, -1)
    actions, logp = sample_masked_categorical(logits, legal, th.Generator().manual_seed(3))
    counts = np.bincount(actions.numpy(), minlength=6)
    assert counts[2] == counts[5] == 0
    p = np.exp([2.0, 0.0, -1.0, 1.0])
    p /= p.sum()
    assert chisquare(counts[[0, 1, 3, 4]], rows * p).pvalue > 1e-3
    position = np.searchsorted([0, 1, 3, 4], actions.numpy())  # action -> index in p
    np.testing.assert_allclose(logp.numpy(), np.log(p)[position], rtol=1e-5)


def test_huge_logits_and_one_legal_action_anywhere_in_a_long_row():
    logits = th.randn(3, 600) * 1e4  # exp(logit) would overflow without the maximum
    legal = th.zeros(3, 600, dtype=th.bool)
    legal[0, 0] = legal[1, 599] = legal[2, 300] = True
    actions, logp = sample_masked_categorical(logits, legal, th.Generator().manual_seed(0))
    assert actions.tolist() == [0, 599, 300]
    assert th.equal(logp, th.zeros(3))


def test_same_generator_seed_same_draws_and_each_row_its_own():
    logits = th.randn(64, 50)
    legal = th.rand(64, 50) < 0.3
    legal[:, 7] = True
    a, _ = sample_masked_categorical(logits, legal, th.Generator().manual_seed(5))
    b, _ = sample_masked_categorical(logits, legal, th.Generator().manual_seed(5))
    assert th.equal(a, b)
    # a row's draw depends on its logits, mask and uniform only: row 10 alone, given
    # row 10's uniform, draws what it drew in the batch
    u = th.rand(64, generator=th.Generator().manual_seed(5), dtype=th.float64)
    alone, _ = _run(logits[10:11].numpy(), legal[10:11].numpy(), u[10:11].numpy())
    assert alone[0] == a[10]


def test_writes_into_the_given_rows():
    logits, legal = th.zeros(4, 3), th.ones(4, 3, dtype=th.bool)
    store_a, store_p = th.full((2, 4), -5, dtype=th.int64), th.zeros(2, 4)
    a, p = sample_masked_categorical(logits, legal, None, actions=store_a[1], log_probs=store_p[1])
    assert a.data_ptr() == store_a[1].data_ptr() and (store_a[1] >= 0).all()
    assert (store_a[0] == -5).all()
    th.testing.assert_close(store_p[1], th.full((4,), -math.log(3.0)))


@pytest.mark.parametrize("bad, match", [
    (dict(logits=th.zeros(4, 3, dtype=th.float64)), "float32"),
    (dict(logits=th.zeros(4)), r"\(B, A\)"),
    (dict(legal=th.ones(4, 2, dtype=th.bool)), "shape"),
    (dict(legal=np.ones((4, 3), np.float32)), "bool or integer"),
    (dict(actions=th.zeros(4, dtype=th.int32)), "actions"),
    (dict(log_probs=th.zeros(5)), "log_probs"),
])
def test_bad_arguments_are_refused_before_the_kernel_runs(bad, match):
    args = dict(logits=th.zeros(4, 3), legal=th.ones(4, 3, dtype=th.bool))
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        sample_masked_categorical(args.pop("logits"), args.pop("legal"), None, **args)


# -- the action head at the legal lists only ---------------------------------------------
def test_listed_linear_gives_the_dense_heads_listed_logits_and_gradients():
    from trafficenvs.agents.categorical_kernels import listed_linear
    from trafficenvs.agents.trainer import ILLEGAL_LOGIT, legal_lists

    gen = th.Generator().manual_seed(0)
    illegal = th.rand(64, 40, generator=gen) > 0.2
    illegal[:, 3] = False
    index, valid = legal_lists(illegal)
    latent = th.randn(64, 16, generator=gen)
    weight, bias = th.randn(40, 16, generator=gen), th.randn(40, generator=gen)
    upstream = th.randn(index.shape, generator=gen)
    grads = []
    for listed in (True, False):
        leaves = [x.clone().requires_grad_() for x in (latent, weight, bias)]
        if listed:
            out = listed_linear(*leaves, index, valid, ILLEGAL_LOGIT)
        else:
            out = th.nn.functional.linear(*leaves).gather(1, index).masked_fill(
                ~valid, ILLEGAL_LOGIT)
        out.backward(upstream)
        grads.append((out.detach(), *(x.grad for x in leaves)))
    for mine, dense in zip(*grads):
        th.testing.assert_close(mine, dense, rtol=1e-5, atol=1e-5)


def test_listed_linear_by_hand():
    # two actions, hidden 2: row 0 lists actions 1 then 0; row 1 lists action 1 and a pad
    from trafficenvs.agents.categorical_kernels import listed_linear

    latent = th.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    weight = th.tensor([[0.5, 0.0], [1.0, 1.0]], requires_grad=True)
    bias = th.tensor([0.0, 10.0], requires_grad=True)
    index = th.tensor([[1, 0], [1, 0]])
    valid = th.tensor([[True, True], [True, False]])
    out = listed_linear(latent, weight, bias, index, valid, -7.0)
    assert out.tolist() == [[13.0, 0.5], [12.0, -7.0]]
    out.sum().backward()
    # d/d latent: row 0 = w1 + w0, row 1 = w1 (the pad gives nothing)
    assert latent.grad.tolist() == [[1.5, 1.0], [1.0, 1.0]]
    # d/d w0 = latent row 0; d/d w1 = latent rows 0 and 1; bias: how often listed
    assert weight.grad.tolist() == [[1.0, 2.0], [4.0, 1.0]]
    assert bias.grad.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("bad, match", [
    (dict(latent=th.zeros(4, 3, dtype=th.float64)), "float32"),
    (dict(weight=th.zeros(5, 2)), "shapes"),
    (dict(index=th.full((4, 2), 5)), "outside"),
    (dict(valid=th.ones(4, 2, dtype=th.uint8)), "shapes"),
])
def test_listed_linear_refuses_what_does_not_fit(bad, match):
    from trafficenvs.agents.categorical_kernels import listed_linear

    args = dict(latent=th.zeros(4, 3), weight=th.zeros(5, 3), bias=th.zeros(5),
                index=th.zeros(4, 2, dtype=th.int64), valid=th.ones(4, 2, dtype=th.bool))
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        listed_linear(args["latent"], args["weight"], args["bias"], args["index"],
                      args["valid"], -1.0)
