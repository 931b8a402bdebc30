"""Unit and property tests of d2lutil.attention, and equivalence with torch's module."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from attention_cases import BOTH_PATHS, named_cases, raises_naming, random_qkv
from d2lutil import DotProductAttention, MultiHeadAttention, masked_softmax
from d2lutil.masks import valid_lens_to_key_padding


def built(num_hiddens=16, num_heads=4, fused=False, seed=0, **kwargs):
    """A MultiHeadAttention in eval mode whose lazy projections are materialized."""
    torch.manual_seed(seed)
    model = MultiHeadAttention(num_hiddens, num_heads, fused=fused, **kwargs).eval()
    model(*random_qkv(width=num_hiddens))
    return model


def torch_reference(model):
    """torch.nn.MultiheadAttention holding the same weights as ``model``."""
    ref = nn.MultiheadAttention(model.num_hiddens, model.num_heads, bias=False,
                                batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([model.W_q.weight, model.W_k.weight,
                                            model.W_v.weight]))
        ref.out_proj.weight.copy_(model.W_o.weight)
    return ref


# ---------------------------------------------------------------- masked_softmax

def test_masked_softmax_without_lengths_is_softmax():
    X = torch.randn(2, 3, 5)
    torch.testing.assert_close(masked_softmax(X), torch.softmax(X, dim=-1))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_rows_sum_to_one_over_valid_keys_and_zero_elsewhere(data):
    batch_size = data.draw(st.integers(1, 3))
    num_queries = data.draw(st.integers(1, 4))
    num_keys = data.draw(st.integers(1, 6))
    per_query = data.draw(st.booleans())
    shape = (batch_size, num_queries) if per_query else (batch_size,)
    count = batch_size * (num_queries if per_query else 1)
    lens = data.draw(st.lists(st.integers(0, num_keys), min_size=count, max_size=count))
    valid_lens = torch.tensor(lens).reshape(shape)
    X = torch.randn(batch_size, num_queries, num_keys) * 5
    weights = masked_softmax(X, valid_lens)
    full = valid_lens if per_query else valid_lens[:, None].expand(-1, num_queries)
    keep = torch.arange(num_keys) < full[..., None]
    assert torch.all(weights[~keep] == 0)
    sums = weights.sum(-1)
    torch.testing.assert_close(sums, (full > 0).to(sums.dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_query_without_valid_key_gets_zero_weights_and_gradient_not_nan(dtype):
    X = torch.randn(2, 3, 4).to(dtype).requires_grad_(True)
    weights = masked_softmax(X, torch.tensor([0, 2]))
    assert not torch.isnan(weights).any()
    assert torch.all(weights[0] == 0)
    torch.testing.assert_close(weights[1].sum(-1).float(), torch.ones(3), atol=1e-2, rtol=0)
    weights.pow(2).sum().backward()
    assert torch.isfinite(X.grad).all() and torch.all(X.grad[0] == 0)


# ------------------------------------------------------------ DotProductAttention

def test_dot_product_attention_matches_the_formula():
    queries, keys, values = random_qkv()
    attention = DotProductAttention().eval()
    out = attention(queries, keys, values, torch.tensor([6, 2, 4]))
    scores = queries @ keys.transpose(1, 2) / 16 ** 0.5
    mask = torch.arange(6) < torch.tensor([6, 2, 4])[:, None, None]
    expected = torch.softmax(scores.masked_fill(~mask, float("-inf")), -1) @ values
    torch.testing.assert_close(out, expected)
    assert attention.attention_weights.shape == (3, 4, 6)


def test_dot_product_attention_keeps_weights_before_dropout():
    torch.manual_seed(0)
    attention = DotProductAttention(dropout=0.5).train()
    attention(*random_qkv())
    torch.testing.assert_close(attention.attention_weights.sum(-1), torch.ones(3, 4))


# ------------------------------------------------------------- MultiHeadAttention

def test_book_shape_check():
    attention = MultiHeadAttention(100, 5, 0.5)
    X, Y = torch.ones(2, 4, 100), torch.ones(2, 6, 100)
    assert attention(X, Y, Y, torch.tensor([3, 2])).shape == (2, 4, 100)
    assert attention.attention_weights.shape == (2, 5, 4, 6)


def test_explicit_input_widths_create_parameters_at_once():
    model = MultiHeadAttention(16, 4, query_size=10, key_size=12, value_size=14)
    widths = [model.W_q.weight.shape, model.W_k.weight.shape, model.W_v.weight.shape]
    assert widths == [(16, 10), (16, 12), (16, 14)]
    out = model(torch.randn(2, 3, 10), torch.randn(2, 5, 12), torch.randn(2, 5, 14))
    assert out.shape == (2, 3, 16)


def test_lazy_projections_take_the_width_of_the_first_call():
    model = MultiHeadAttention(16, 4)
    model(torch.randn(1, 2, 16), torch.randn(1, 3, 8), torch.randn(1, 3, 8))
    assert model.W_k.weight.shape == (16, 8)
    with pytest.raises(ValueError, match="keys must have width 8 .*got width 16"):
        model(torch.randn(1, 2, 16), torch.randn(1, 3, 16), torch.randn(1, 3, 8))
    with pytest.raises(ValueError, match="values must have width 8 .*got width 16"):
        model(torch.randn(1, 2, 16), torch.randn(1, 3, 8), torch.randn(1, 3, 16))
    with pytest.raises(ValueError, match="queries must have width 10 .*got width 16"):
        MultiHeadAttention(16, 4, query_size=10)(*random_qkv())


CASES = {
    "self": dict(num_queries=6, valid_lens=None),
    "cross": dict(num_queries=4, valid_lens=None),
    "padding": dict(num_queries=4, valid_lens=torch.tensor([2, 6, 3])),
    "causal": dict(num_queries=6, valid_lens=torch.arange(1, 7).repeat(3, 1)),
}


def reference_masks(case, num_queries, num_keys):
    if case == "padding":
        return dict(key_padding_mask=valid_lens_to_key_padding(CASES[case]["valid_lens"], num_keys))
    if case == "causal":
        return dict(attn_mask=torch.ones(num_queries, num_keys, dtype=torch.bool).triu(1))
    return {}


@BOTH_PATHS
@pytest.mark.parametrize("case", list(CASES))
def test_equals_torch_multihead_attention(fused, case):
    model = built(fused=fused)
    queries, keys, values = random_qkv(num_queries=CASES[case]["num_queries"], seed=1)
    if case == "self":
        keys = values = queries
    out = model(queries, keys, values, CASES[case]["valid_lens"])
    expected, _ = torch_reference(model)(queries, keys, values,
                                         **reference_masks(case, queries.shape[1], keys.shape[1]))
    assert (out - expected).abs().max() <= 1e-5


@BOTH_PATHS
def test_fused_and_weights_paths_agree(fused):
    model = built(fused=fused)
    other = built(fused=not fused)
    other.load_state_dict(model.state_dict())
    for valid_lens in (None, torch.tensor([0, 6, 3]), torch.arange(0, 4).repeat(3, 1)):
        args = (*random_qkv(seed=3), valid_lens)
        assert (model(*args) - other(*args)).abs().max() <= 1e-6


@BOTH_PATHS
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_query_without_valid_key_gives_zero_output(fused, dtype):
    model = built(fused=fused).to(dtype)
    queries, keys, values = (x.to(dtype) for x in random_qkv())
    out = model(queries, keys, values, torch.tensor([0, 6, 3]))
    assert not torch.isnan(out).any()
    assert torch.all(out[0] == 0)
    assert out[1].abs().max() > 0


@BOTH_PATHS
@settings(max_examples=15, deadline=None)
@given(valid_lens=st.lists(st.integers(0, 6), min_size=3, max_size=3), seed=st.integers(0, 99))
def test_masked_keys_and_values_change_nothing(fused, valid_lens, seed):
    model = built(fused=fused)
    queries, keys, values = random_qkv(seed=seed)
    lens = torch.tensor(valid_lens)
    masked = torch.arange(6) >= lens[:, None]  # (batch_size, num_keys)
    noise_keys, noise_values = random_qkv(seed=seed + 1)[1:]
    keys2 = torch.where(masked[..., None], noise_keys * 100, keys)
    values2 = torch.where(masked[..., None], noise_values * 100, values)
    out1 = model(queries, keys, values, lens)
    out2 = model(queries, keys2, values2, lens)
    assert (out1 - out2).abs().max() <= 1e-5


@BOTH_PATHS
def test_self_attention_is_permutation_equivariant(fused):
    model = built(fused=fused)
    X = random_qkv(num_queries=6, seed=4)[0]
    perm = torch.randperm(6, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(model(X, X, X)[:, perm], model(X[:, perm], X[:, perm], X[:, perm]),
                               atol=1e-5, rtol=0)


def test_fused_path_keeps_no_weights_and_applies_dropout_only_in_training():
    model = built(fused=True, dropout=0.5)
    args = random_qkv()
    torch.testing.assert_close(model(*args), model(*args))
    assert model.attention_weights is None
    model.train()
    assert (model(*args) - model(*args)).abs().max() > 0


# ------------------------------------------------------------------- bad input

BAD_CONSTRUCTION = [
    (dict(num_hiddens=10, num_heads=3), ValueError,
     "num_hiddens (10) must be divisible by num_heads (3)"),
    (dict(num_hiddens=0, num_heads=1), ValueError, "num_hiddens must be a positive int, got 0"),
    (dict(num_hiddens=8, num_heads=2.0), TypeError, "num_heads must be a positive int, got float"),
    (dict(num_hiddens=8, num_heads=2, dropout=1.5), ValueError, "dropout must be in [0, 1)"),
]


@named_cases("kwargs, error, message", BAD_CONSTRUCTION)
def test_bad_construction_is_named(kwargs, error, message):
    with raises_naming(error, message):
        MultiHeadAttention(**kwargs)


q, k, v = random_qkv()
BAD_CALLS = [
    ((q[0], k, v, None), ValueError, "queries must be 3-D"),
    ((q, k[0], v, None), ValueError, "keys must be 3-D"),
    ((q, k, v.numpy(), None), TypeError, "values must be a torch.Tensor"),
    ((q, k, v[:, :5], None), ValueError, "keys and values must have the same number"),
    ((q, k[:2], v[:2], None), ValueError, "same batch size"),
    ((q, k, v, torch.tensor([1, 2])), ValueError, "valid_lens must have shape (3,) or (3, 4)"),
    ((q, k, v, torch.tensor([1, -1, 2])), ValueError, "valid_lens must be >= 0"),
    ((q, k, v, torch.tensor([1, 7, 2])), ValueError,
     "valid_lens must be <= the number of keys (6)"),
    ((q, k, v, torch.tensor([1.0, 2.0, 3.0])), TypeError, "valid_lens must hold integers"),
    ((q, k, v, torch.tensor([True, True, False])), TypeError, "valid_lens must hold integers"),
    ((q, k, v, [1, 2, 3]), TypeError, "valid_lens must be a torch.Tensor or None"),
]


@BOTH_PATHS
@named_cases("args, error, message", BAD_CALLS)
def test_bad_calls_are_named(fused, args, error, message):
    model = MultiHeadAttention(16, 4, fused=fused)
    with raises_naming(error, message):
        model(*args)


def test_masked_softmax_bad_input_is_named():
    with pytest.raises(ValueError, match="X must be 3-D"):
        masked_softmax(torch.randn(3, 4))
    with pytest.raises(ValueError, match="valid_lens must be <= the number of keys"):
        masked_softmax(torch.randn(2, 3, 4), torch.tensor([5, 1]))


def test_dot_product_attention_needs_matching_query_and_key_widths():
    with pytest.raises(ValueError, match="queries and keys must have the same width"):
        DotProductAttention()(torch.randn(1, 2, 4), torch.randn(1, 3, 5), torch.randn(1, 3, 5))
