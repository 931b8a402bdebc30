"""MultiHeadAttention's head mask and shared key/value heads, against the definitions.

``by_hand`` below never calls the module: it slices each head's rows out of the
projection matrices and does the scaled dot products, the masked softmax, the
mixing, the head mask and the output projection one head at a time.
"""

import pytest
import torch
from torch.nn import functional as F

from attention_cases import BOTH_PATHS, named_cases, raises_naming, random_qkv
from d2lutil import MultiHeadAttention


def built(num_hiddens=16, num_heads=4, fused=False, seed=0, dtype=torch.float32, **kwargs):
    """An eval-mode MultiHeadAttention without biases and with explicit input widths."""
    torch.manual_seed(seed)
    return MultiHeadAttention(num_hiddens, num_heads, fused=fused, query_size=num_hiddens,
                              key_size=num_hiddens, value_size=num_hiddens,
                              **kwargs).to(dtype).eval()


def by_hand(model, queries, keys, values, valid_lens=None, head_mask=None):
    """Multi-head attention from its definition, one head at a time.

    Query head j uses rows j*p .. (j+1)*p of W_q (p = num_hiddens / num_heads) and
    rows g*p .. (g+1)*p of W_k and W_v, with g = j // (num_heads // num_kv_heads).
    Returns the output and the weights, (batch_size, num_heads, num_queries, num_keys).
    """
    num_heads = model.num_heads
    num_kv_heads = getattr(model, "num_kv_heads", num_heads)
    p = model.num_hiddens // num_heads
    batch_size, num_queries, num_keys = queries.shape[0], queries.shape[1], keys.shape[1]
    if valid_lens is None:
        valid_lens = torch.full((batch_size, num_queries), num_keys)
    elif valid_lens.dim() == 1:
        valid_lens = valid_lens[:, None].expand(-1, num_queries)
    # (batch_size, num_queries, num_keys): True where the query may look
    allowed = torch.arange(num_keys) < valid_lens[:, :, None]
    W_q, W_k, W_v, W_o = (W.weight for W in (model.W_q, model.W_k, model.W_v, model.W_o))
    head_outputs, head_weights = [], []
    for j in range(num_heads):
        g = j // (num_heads // num_kv_heads)
        q = queries @ W_q[j * p:(j + 1) * p].T
        k = keys @ W_k[g * p:(g + 1) * p].T
        v = values @ W_v[g * p:(g + 1) * p].T
        scores = q @ k.transpose(1, 2) / p ** 0.5
        # A query with no valid key gets a row of NaN here, made zero: it attends to nothing.
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1).nan_to_num(0.0)
        out = weights @ v
        if head_mask is not None:
            factor = head_mask[j] if head_mask.dim() == 1 else head_mask[:, j, None, None]
            out = out * factor
        head_outputs.append(out)
        head_weights.append(weights)
    return torch.cat(head_outputs, dim=-1) @ W_o.T, torch.stack(head_weights, dim=1)


# -------------------------------------------------------------------- head mask

def head_masks(batch_size=3, num_heads=4):
    gen = torch.Generator().manual_seed(7)
    return {
        "per-head": torch.tensor([1.0, 0.0, 0.5, -2.0])[:num_heads],
        "per-sequence": torch.randn(batch_size, num_heads, generator=gen),
    }


@BOTH_PATHS
@pytest.mark.parametrize("shape", ["per-head", "per-sequence"])
@pytest.mark.parametrize("valid_lens", [None, torch.tensor([2, 6, 0]),
                                        torch.arange(1, 5).repeat(3, 1)],
                         ids=["none", "padding", "causal"])
def test_head_mask_scales_each_heads_output(fused, shape, valid_lens):
    model = built(fused=fused)
    queries, keys, values = random_qkv(seed=1)
    head_mask = head_masks()[shape]
    out = model(queries, keys, values, valid_lens, head_mask=head_mask)
    expected, expected_weights = by_hand(model, queries, keys, values, valid_lens, head_mask)
    assert (out - expected).abs().max() <= 1e-5
    if not fused:
        # The weights are those before the mask: a switched-off head still reports them.
        assert (model.attention_weights - expected_weights).abs().max() <= 1e-6


@BOTH_PATHS
def test_a_mask_of_ones_changes_nothing_and_zeros_remove_every_head(fused):
    model = built(fused=fused, bias=True)
    args = random_qkv(seed=2)
    plain = model(*args)
    assert torch.equal(model(*args, head_mask=torch.ones(4)), plain)
    # With every head removed only W_o's bias is left.
    out = model(*args, head_mask=torch.zeros(3, 4))
    assert torch.equal(out, model.W_o.bias.expand_as(out))


@BOTH_PATHS
def test_removing_one_head_is_zeroing_its_columns_of_W_o(fused):
    model = built(fused=fused)
    args = random_qkv(seed=3)
    masked = model(*args, head_mask=torch.tensor([1.0, 1.0, 0.0, 1.0]))
    with torch.no_grad():
        model.W_o.weight[:, 8:12] = 0
    assert (masked - model(*args)).abs().max() <= 1e-6


@BOTH_PATHS
@pytest.mark.parametrize("shape", ["per-head", "per-sequence"])
def test_gradient_with_respect_to_the_mask_is_a_finite_difference(fused, shape):
    model = built(fused=fused, dtype=torch.float64)
    queries, keys, values = random_qkv(seed=4, dtype=torch.float64)
    valid_lens = torch.tensor([3, 6, 1])
    target = torch.randn(3, 4, 16, generator=torch.Generator().manual_seed(5),
                         dtype=torch.float64)
    head_mask = torch.ones((4,) if shape == "per-head" else (3, 4), dtype=torch.float64,
                           requires_grad=True)

    def loss(mask):
        out = model(queries, keys, values, valid_lens, head_mask=mask)
        return ((out - target) ** 2).mean()

    loss(head_mask).backward()
    eps = 1e-6
    finite_difference = torch.zeros_like(head_mask)
    with torch.no_grad():
        for index in torch.cartesian_prod(*(torch.arange(n) for n in head_mask.shape)):
            step = torch.zeros_like(head_mask)
            step[tuple(index.reshape(-1))] = eps
            finite_difference[tuple(index.reshape(-1))] = (
                loss(head_mask + step) - loss(head_mask - step)) / (2 * eps)
    assert finite_difference.abs().max() > 1e-3  # the heads do matter to this loss
    torch.testing.assert_close(head_mask.grad, finite_difference, atol=1e-8, rtol=1e-6)


def test_head_mask_follows_the_dtype_of_the_model():
    model = built()
    out = model(*random_qkv(), head_mask=torch.ones(4, dtype=torch.float64))
    assert out.dtype == torch.float32


q, k, v = random_qkv()
BAD_MASKS = [
    (torch.ones(3), ValueError, "head_mask must have shape (4,) or (3, 4)"),
    (torch.ones(1, 4), ValueError, "got (1, 4)"),
    (torch.ones(4, dtype=torch.long), TypeError, "head_mask must hold floating-point numbers"),
    (torch.ones(4, dtype=torch.bool), TypeError, "head_mask must hold floating-point numbers"),
    ([1.0, 1.0, 0.0, 1.0], TypeError, "head_mask must be a floating torch.Tensor or None"),
]


@BOTH_PATHS
@named_cases("head_mask, error, message", BAD_MASKS)
def test_bad_head_masks_are_named(fused, head_mask, error, message):
    model = MultiHeadAttention(16, 4, fused=fused)
    with raises_naming(error, message):
        model(q, k, v, head_mask=head_mask)


# ------------------------------------------------- shared key/value heads (GQA, MQA)

# (num_heads, num_kv_heads) at num_hiddens = 24: num_kv_heads in {1, num_heads / 2, num_heads},
# and one grouping (6 query heads over 2) where "repeat" and "repeat_interleave" differ
# for every head but the first.
GROUPINGS = [(4, 1), (4, 2), (4, 4), (6, 2)]
GROUPING_IDS = [f"h{h}-kv{kv}" for h, kv in GROUPINGS]
GQA_CASES = {
    "none": dict(num_queries=4, valid_lens=None),
    "padding": dict(num_queries=4, valid_lens=torch.tensor([2, 6, 3])),
    "causal": dict(num_queries=6, valid_lens=torch.arange(1, 7).repeat(3, 1)),
}


def gqa_model(num_heads, num_kv_heads, fused=False, **kwargs):
    return built(num_hiddens=24, num_heads=num_heads, num_kv_heads=num_kv_heads,
                 fused=fused, **kwargs)


def every_gqa_case(test):
    """Run ``test`` on both paths, for every case of GQA_CASES and every grouping."""
    test = BOTH_PATHS(test)
    test = pytest.mark.parametrize("case", list(GQA_CASES))(test)
    return pytest.mark.parametrize("num_heads, num_kv_heads", GROUPINGS, ids=GROUPING_IDS)(test)


def gqa_call(fused, case, num_heads, num_kv_heads, seed):
    """A grouped model, seeded inputs of ``case`` and the model's output on them."""
    model = gqa_model(num_heads, num_kv_heads, fused=fused)
    queries, keys, values = random_qkv(num_queries=GQA_CASES[case]["num_queries"],
                                       width=24, seed=seed)
    valid_lens = GQA_CASES[case]["valid_lens"]
    out = model(queries, keys, values, valid_lens)
    return model, (queries, keys, values, valid_lens), out


@every_gqa_case
def test_shared_kv_heads_equal_the_definition(fused, case, num_heads, num_kv_heads):
    model, (queries, keys, values, valid_lens), out = gqa_call(
        fused, case, num_heads, num_kv_heads, seed=8)
    expected, expected_weights = by_hand(model, queries, keys, values, valid_lens)
    assert (out - expected).abs().max() <= 1e-5
    if not fused:
        assert model.attention_weights.shape == (3, num_heads, queries.shape[1], 6)
        assert (model.attention_weights - expected_weights).abs().max() <= 1e-6


def torch_version():
    return tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])


@pytest.mark.skipif(torch_version() < (2, 5),
                    reason="scaled_dot_product_attention(enable_gqa=True) needs torch >= 2.5")
@every_gqa_case
def test_shared_kv_heads_equal_torch_enable_gqa(fused, case, num_heads, num_kv_heads):
    model, (queries, keys, values, valid_lens), out = gqa_call(
        fused, case, num_heads, num_kv_heads, seed=9)
    batch_size, num_queries, num_keys = queries.shape[0], queries.shape[1], keys.shape[1]

    head_size = 24 // num_heads

    def split(X, heads):
        # (batch_size, length, heads * head_size) -> (batch_size, heads, length, head_size)
        return X.reshape(batch_size, X.shape[1], heads, head_size).transpose(1, 2)

    attn_mask = None
    if valid_lens is not None:
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
        # (batch_size, 1, 1 or num_queries, num_keys), broadcast over the heads
        attn_mask = (torch.arange(num_keys) < lens[..., None])[:, None]
    with torch.no_grad():
        heads = F.scaled_dot_product_attention(
            split(queries @ model.W_q.weight.T, num_heads),
            split(keys @ model.W_k.weight.T, num_kv_heads),
            split(values @ model.W_v.weight.T, num_kv_heads),
            attn_mask=attn_mask, enable_gqa=True)
    # (batch_size, num_heads, num_queries, head_size) -> (batch_size, num_queries, 24)
    expected = heads.transpose(1, 2).reshape(batch_size, num_queries, 24) @ model.W_o.weight.T
    assert (out - expected).abs().max() <= 1e-5


@BOTH_PATHS
def test_head_mask_is_indexed_by_query_head_when_heads_share_kv(fused):
    model = gqa_model(4, 2, fused=fused)
    queries, keys, values = random_qkv(width=24, seed=10)
    head_mask = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 2.0, 0.5], [1.0, 1.0, 1.0, 1.0]])
    out = model(queries, keys, values, torch.tensor([6, 1, 4]), head_mask=head_mask)
    expected, _ = by_hand(model, queries, keys, values, torch.tensor([6, 1, 4]), head_mask)
    assert (out - expected).abs().max() <= 1e-5


@BOTH_PATHS
@pytest.mark.parametrize("lazy", [False, True], ids=["sized", "lazy"])
def test_num_kv_heads_equal_to_num_heads_is_the_default_bit_for_bit(fused, lazy):
    sizes = {} if lazy else dict(query_size=24, key_size=24, value_size=24)
    args = random_qkv(width=24, seed=11)
    models = []
    for num_kv_heads in (None, 4):
        torch.manual_seed(12)
        model = MultiHeadAttention(24, 4, fused=fused, bias=True, num_kv_heads=num_kv_heads,
                                   **sizes).eval()
        models.append((model, model(*args, torch.tensor([6, 2, 4]))))
    (default, out_default), (explicit, out_explicit) = models
    assert default.num_kv_heads == 4
    assert list(default.state_dict()) == list(explicit.state_dict()) == [
        "W_q.weight", "W_q.bias", "W_k.weight", "W_k.bias",
        "W_v.weight", "W_v.bias", "W_o.weight", "W_o.bias"]
    assert all(torch.equal(a, b) for a, b in zip(default.state_dict().values(),
                                                  explicit.state_dict().values(), strict=True))
    assert torch.equal(out_default, out_explicit)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("num_kv_heads", [1, 2, 4, 8])
def test_parameter_count_follows_the_formula(num_kv_heads, bias):
    d, h = 64, 8
    kv_width = num_kv_heads * d // h
    # W_q and W_o are d x d; W_k and W_v map d to num_kv_heads * head_size.
    expected = 2 * d * d + 2 * d * kv_width + (2 * d + 2 * kv_width if bias else 0)
    model = MultiHeadAttention(d, h, bias=bias, num_kv_heads=num_kv_heads,
                               query_size=d, key_size=d, value_size=d)
    assert sum(p.numel() for p in model.parameters()) == expected


BAD_KV_HEADS = [
    (dict(num_heads=4, num_kv_heads=3), ValueError, "num_kv_heads (3) must divide num_heads (4)"),
    (dict(num_heads=4, num_kv_heads=8), ValueError, "num_kv_heads (8) must divide num_heads (4)"),
    (dict(num_heads=4, num_kv_heads=0), ValueError, "num_kv_heads must be a positive int, got 0"),
    (dict(num_heads=4, num_kv_heads=2.0), TypeError,
     "num_kv_heads must be a positive int, got float"),
]


@named_cases("kwargs, error, message", BAD_KV_HEADS)
def test_bad_num_kv_heads_is_named(kwargs, error, message):
    with raises_naming(error, message):
        MultiHeadAttention(16, **kwargs)

