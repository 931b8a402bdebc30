"""d2lutil.masks: SDPA (True = attend), the additive mask and d2lutil's valid_lens path
must give the same attention (float64, atol 1e-12); every length is >= 1, since a row with
no valid key has no agreed answer. nn.MultiheadAttention reads valid_lens_to_key_padding's
masks in test_attention.py (test_equals_torch_multihead_attention); notebook 10 asserts
that torch's key_padding_mask equals its negated attn_mask.
"""

import pytest
import torch
from torch.nn import functional as F

from d2lutil import DotProductAttention, masked_softmax
from d2lutil.masks import (
    additive_to_bool,
    bool_to_additive,
    bool_to_valid_lens,
    key_padding_to_valid_lens,
    valid_lens_to_bool,
    valid_lens_to_key_padding,
)

BATCH_SIZE, NUM_HEADS, NUM_QUERIES, NUM_KEYS, HEAD_SIZE = 2, 3, 4, 6, 5
PER_SEQUENCE = torch.tensor([6, 2])
PER_QUERY = torch.tensor([[1, 2, 3, 4], [6, 5, 1, 2]])
LENS = pytest.mark.parametrize("valid_lens", [PER_SEQUENCE, PER_QUERY],
                               ids=["per_sequence", "per_query"])


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed),
                       dtype=torch.float64)


def qkv():
    """Each: (batch_size, num_heads, length, head_size)."""
    return (randn(BATCH_SIZE, NUM_HEADS, NUM_QUERIES, HEAD_SIZE, seed=1),
            randn(BATCH_SIZE, NUM_HEADS, NUM_KEYS, HEAD_SIZE, seed=2),
            randn(BATCH_SIZE, NUM_HEADS, NUM_KEYS, HEAD_SIZE, seed=3))


@LENS
def test_bool_mask_shape_and_values(valid_lens):
    mask = valid_lens_to_bool(valid_lens, NUM_KEYS)
    rows = 1 if valid_lens.dim() == 1 else NUM_QUERIES
    assert mask.shape == (BATCH_SIZE, 1, rows, NUM_KEYS) and mask.dtype == torch.bool
    assert torch.equal(mask.sum(dim=-1)[:, 0], valid_lens.reshape(BATCH_SIZE, rows))


@LENS
def test_sdpa_bool_equals_additive_equals_valid_lens(valid_lens):
    queries, keys, values = qkv()
    mask = valid_lens_to_bool(valid_lens, NUM_KEYS)
    with_bool = F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask)
    additive = bool_to_additive(mask, dtype=torch.float64)
    with_additive = F.scaled_dot_product_attention(queries, keys, values, attn_mask=additive)
    # d2lutil's path: heads folded into the batch axis, lengths repeated per head
    attention = DotProductAttention()
    folded = attention(*(X.reshape(-1, *X.shape[2:]) for X in (queries, keys, values)),
                       torch.repeat_interleave(valid_lens, NUM_HEADS, dim=0))
    torch.testing.assert_close(with_bool, with_additive, rtol=0, atol=1e-12)
    torch.testing.assert_close(folded.reshape(with_bool.shape), with_bool, rtol=0, atol=1e-12)


@LENS
def test_additive_mask_adds_to_scores_as_masked_softmax(valid_lens):
    scores = randn(BATCH_SIZE, NUM_QUERIES, NUM_KEYS)
    additive = bool_to_additive(valid_lens_to_bool(valid_lens, NUM_KEYS), torch.float64)
    torch.testing.assert_close(F.softmax(scores + additive[:, 0], dim=-1),
                               masked_softmax(scores, valid_lens), rtol=0, atol=1e-12)


@LENS
def test_round_trips(valid_lens):
    mask = valid_lens_to_bool(valid_lens, NUM_KEYS)
    assert torch.equal(bool_to_valid_lens(mask), valid_lens)
    assert torch.equal(bool_to_valid_lens(mask[:, 0]), valid_lens)
    assert torch.equal(additive_to_bool(bool_to_additive(mask)), mask)
    if valid_lens.dim() == 1:
        padding = valid_lens_to_key_padding(valid_lens, NUM_KEYS)
        assert torch.equal(padding, ~mask[:, 0, 0])
        assert torch.equal(key_padding_to_valid_lens(padding), valid_lens)


def test_zero_length_gives_all_padding():
    lens = torch.tensor([0, 6])
    assert valid_lens_to_key_padding(lens, NUM_KEYS)[0].all()
    assert torch.equal(key_padding_to_valid_lens(valid_lens_to_key_padding(lens, NUM_KEYS)), lens)
    assert torch.isinf(bool_to_additive(valid_lens_to_bool(lens, NUM_KEYS))[0]).all()


@pytest.mark.parametrize("call, error, match", [
    (lambda: valid_lens_to_key_padding(PER_QUERY, NUM_KEYS), ValueError,
     r"shape \(batch_size,\) for a key_padding_mask.*per-query"),
    (lambda: valid_lens_to_bool([2, 3], NUM_KEYS), TypeError, "valid_lens must be a torch.Tensor"),
    (lambda: valid_lens_to_bool(torch.tensor([2.0]), NUM_KEYS), TypeError, "integers"),
    (lambda: valid_lens_to_bool(torch.ones(2, 2, 2, dtype=torch.long), NUM_KEYS), ValueError,
     r"valid_lens must have shape \(batch_size,\)"),
    (lambda: valid_lens_to_bool(torch.tensor([7]), NUM_KEYS), ValueError,
     r"valid_lens must be <= the number of keys \(6\)"),
    (lambda: valid_lens_to_bool(torch.tensor([-1]), NUM_KEYS), ValueError,
     "valid_lens must be >= 0"),
    (lambda: valid_lens_to_bool(PER_SEQUENCE, 0), ValueError, "num_keys must be a positive int"),
    (lambda: valid_lens_to_key_padding(PER_SEQUENCE, 2.0), TypeError, "num_keys"),
    (lambda: key_padding_to_valid_lens(torch.tensor([[False, True, False]])), ValueError,
     r"mask \(a key_padding_mask, True = ignore\) must list.*prefix.*row \[0\]"),
    (lambda: key_padding_to_valid_lens(torch.zeros(2, 3)), TypeError, "mask must be a boolean"),
    (lambda: key_padding_to_valid_lens(torch.zeros(2, 1, 3, dtype=torch.bool)), ValueError,
     "mask must be 2-D"),
    (lambda: bool_to_valid_lens(torch.ones(2, 3, 1, 4, dtype=torch.bool)), ValueError,
     "head axis of size 1"),
    (lambda: bool_to_valid_lens(torch.tensor([[[True, False, True]]])), ValueError, "prefix"),
    (lambda: bool_to_additive(torch.zeros(2, 3)), TypeError, "mask must be a boolean"),
    (lambda: bool_to_additive(torch.ones(2, dtype=torch.bool), dtype=torch.int64), TypeError,
     "dtype must be a floating-point"),
    (lambda: additive_to_bool(torch.tensor([0.0, -1e9])), ValueError,
     r"only 0 \(attend\) and -inf \(ignore\).*-1000000000.0"),
    (lambda: additive_to_bool(torch.ones(2, dtype=torch.bool)), TypeError,
     "mask must be a floating-point"),
])
def test_bad_arguments_are_named(call, error, match):
    with pytest.raises(error, match=match):
        call()
