"""Tests of d2lutil.cost: parameter and FLOP counts, the closed form, timing."""

import math

import pytest
import torch
from torch import nn

from d2lutil import MultiHeadAttention
from d2lutil.cost import (
    AttentionFlops,
    FlopCount,
    Timing,
    attention_flops,
    count_flops,
    count_parameters,
    time_forward_backward,
)


def attention_module(num_hiddens, num_heads, bias=False, fused=False):
    torch.manual_seed(0)
    return MultiHeadAttention(num_hiddens, num_heads, bias=bias, fused=fused,
                              query_size=num_hiddens, key_size=num_hiddens,
                              value_size=num_hiddens).eval()


# ---------------------------------------------------------------- count_parameters

@pytest.mark.parametrize("in_features, out_features, bias", [(3, 5, True), (7, 2, False)])
def test_count_parameters_of_linear(in_features, out_features, bias):
    layer = nn.Linear(in_features, out_features, bias=bias)
    expected = in_features * out_features + (out_features if bias else 0)
    assert count_parameters(layer) == expected


def test_count_parameters_trainable_only_skips_frozen():
    model = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
    for p in model[0].parameters():
        p.requires_grad_(False)
    assert count_parameters(model) == 4 * 3 + 3 + 3 * 2 + 2
    assert count_parameters(model, trainable_only=True) == 3 * 2 + 2


@pytest.mark.parametrize("num_heads", [1, 2, 4, 8])
def test_attention_parameters_are_4d2_for_every_head_count(num_heads):
    assert count_parameters(attention_module(32, num_heads)) == 4 * 32 ** 2
    assert count_parameters(attention_module(32, num_heads, bias=True)) == 4 * 32 ** 2 + 4 * 32


def test_count_parameters_rejects_uninitialized_lazy_module():
    with pytest.raises(ValueError, match=r"uninitialized lazy parameter 'weight'.*call the module"):
        count_parameters(nn.LazyLinear(4))


def test_count_parameters_works_after_lazy_module_has_seen_input():
    layer = nn.LazyLinear(4, bias=False)
    layer(torch.zeros(2, 6))
    assert count_parameters(layer) == 24


def test_count_parameters_rejects_non_module():
    with pytest.raises(TypeError, match=r"module must be a torch.nn.Module, got list"):
        count_parameters([torch.zeros(3)])


# ---------------------------------------------------------------- count_flops

@pytest.mark.parametrize("n, in_features, out_features", [(1, 1, 1), (5, 3, 7), (16, 32, 8)])
def test_flops_of_linear_are_2_n_in_out(n, in_features, out_features):
    layer = nn.Linear(in_features, out_features, bias=False)
    result = count_flops(layer, torch.randn(n, in_features))
    assert isinstance(result, FlopCount)
    assert result.total == 2 * n * in_features * out_features
    assert result.by_operator == {"aten.mm": 2 * n * in_features * out_features}


def test_count_flops_passes_keyword_arguments_and_accepts_plain_callables():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    result = count_flops(lambda x, *, y: x @ y, a, y=b)
    assert result.total == 2 * 3 * 4 * 5
    # Softmax is invisible to the counter.
    assert count_flops(torch.softmax, a, dim=-1).total == 0


def test_count_flops_sums_operators_into_total():
    layer = nn.Sequential(nn.Linear(8, 8, bias=False), nn.ReLU())
    X = torch.randn(2, 3, 8)
    bmm = count_flops(lambda x: torch.bmm(layer(x), x.transpose(1, 2)), X)
    assert bmm.total == sum(bmm.by_operator.values())
    assert set(bmm.by_operator) == {"aten.mm", "aten.bmm"}
    assert bmm.by_operator["aten.bmm"] == 2 * 2 * 3 * 8 * 3


def test_count_flops_rejects_non_callable():
    message = r"module must be a torch.nn.Module or another callable, got int"
    with pytest.raises(TypeError, match=message):
        count_flops(3, torch.zeros(1))


# ---------------------------------------------------------------- attention_flops

def test_attention_flops_closed_form():
    flops = attention_flops(64, 256)
    assert isinstance(flops, AttentionFlops)
    assert flops.total == 8 * 64 * 256 ** 2 + 4 * 64 ** 2 * 256
    assert flops.projections == 8 * 64 * 256 ** 2
    assert flops.scores == flops.mixing == 2 * 64 ** 2 * 256


def test_attention_flops_scales_with_batch_size_and_keys():
    assert attention_flops(5, 8, batch_size=3).total == 3 * attention_flops(5, 8).total
    cross = attention_flops(4, 8, num_keys=9)
    assert cross.total == 4 * 4 * 64 + 4 * 9 * 64 + 4 * 4 * 9 * 8


@pytest.mark.parametrize("num_heads", [1, 2, 4, 8, 16])
def test_attention_flops_equal_the_counter_for_every_head_count(num_heads):
    n, d = 12, 32
    X = torch.randn(2, n, d)
    counted = count_flops(attention_module(d, num_heads), X, X, X)
    formula = attention_flops(n, d, batch_size=2)
    assert counted.total == formula.total
    assert counted.by_operator["aten.mm"] == formula.projections
    assert counted.by_operator["aten.bmm"] == formula.scores + formula.mixing


@pytest.mark.parametrize("num_heads", [1, 3])
def test_attention_flops_equal_the_counter_for_cross_attention(num_heads):
    queries, keys = torch.randn(1, 4, 24), torch.randn(1, 10, 24)
    counted = count_flops(attention_module(24, num_heads), queries, keys, keys)
    assert counted.total == attention_flops(4, 24, num_keys=10).total


@pytest.mark.parametrize("name, kwargs, error, message", [
    ("num_queries", {"num_queries": 0}, ValueError, "num_queries must be a positive int, got 0"),
    ("num_hiddens", {"num_hiddens": 2.0}, TypeError,
     "num_hiddens must be a positive int, got float"),
    ("num_keys", {"num_keys": -1}, ValueError, "num_keys must be a positive int, got -1"),
    ("batch_size", {"batch_size": True}, TypeError, "batch_size must be a positive int, got bool"),
])
def test_attention_flops_rejects_bad_arguments(name, kwargs, error, message):
    arguments = {"num_queries": 4, "num_hiddens": 8, **kwargs}
    with pytest.raises(error, match=message):
        attention_flops(**arguments)


# ---------------------------------------------------------------- time_forward_backward

def test_time_forward_backward_returns_positive_medians_and_keeps_grads():
    layer = nn.Linear(4, 3)
    layer.weight.grad = torch.full_like(layer.weight, 7.0)
    timing = time_forward_backward(layer, torch.randn(2, 4), min_run_time=0.01, num_threads=1)
    assert isinstance(timing, Timing)
    assert timing._fields == ("forward", "backward")
    assert all(isinstance(t, float) and math.isfinite(t) and t > 0 for t in timing)
    assert torch.equal(layer.weight.grad, torch.full_like(layer.weight, 7.0))
    assert layer.bias.grad is None


def test_time_forward_backward_accepts_callables():
    x = torch.randn(5, requires_grad=True)
    timing = time_forward_backward(lambda v: (v * v).sum(), x, min_run_time=0.01)
    assert timing.forward > 0 and timing.backward > 0


@pytest.mark.parametrize("kwargs, error, message", [
    ({"min_run_time": 0}, ValueError, "min_run_time must be a positive number of seconds, got 0"),
    ({"min_run_time": "1"}, TypeError,
     "min_run_time must be a positive number of seconds, got str"),
    ({"num_threads": 0}, ValueError, "num_threads must be a positive int, got 0"),
    ({"num_threads": 1.5}, TypeError, "num_threads must be a positive int, got float"),
])
def test_time_forward_backward_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        time_forward_backward(nn.Linear(2, 2), torch.randn(1, 2), **kwargs)


def test_time_forward_backward_needs_a_graph():
    message = r"must return a tensor that requires grad"
    with torch.no_grad(), pytest.raises(ValueError, match=message):
        time_forward_backward(nn.Linear(2, 2), torch.randn(1, 2), min_run_time=0.01)
    with pytest.raises(TypeError, match=r"module must be a torch.nn.Module or another callable"):
        time_forward_backward("not a module", torch.randn(1, 2))
