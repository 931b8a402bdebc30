"""d2lutil against the book's own classes: equal where the book is right, and where it is not."""

import functools

import pytest
import torch
from d2l import torch as d2l

import attention_cases
from d2lutil import MultiHeadAttention, masked_softmax

random_qkv = functools.partial(attention_cases.random_qkv, batch_size=2, width=20)


def pair(fused=False):
    """(ours, the book's), with the same weights, in eval mode."""
    torch.manual_seed(0)
    ours = MultiHeadAttention(20, 4, fused=fused).eval()
    book = d2l.MultiHeadAttention(20, 4, 0.0).eval()
    args = random_qkv()
    ours(*args)
    book(*args, None)
    book.load_state_dict(ours.state_dict())
    return ours, book


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("valid_lens", [None, torch.tensor([3, 6]),
                                        torch.arange(1, 5).repeat(2, 1)],
                         ids=["none", "per-sequence", "per-query"])
def test_equal_to_the_book_when_every_query_has_a_valid_key(fused, valid_lens):
    ours, book = pair(fused)
    args = random_qkv(seed=1)
    assert (ours(*args, valid_lens) - book(*args, valid_lens)).abs().max() <= 1e-5


def test_the_book_attends_to_padding_when_no_key_is_valid():
    ours, book = pair()
    args = random_qkv(seed=2)
    valid_lens = torch.tensor([0, 6])
    ours_out, book_out = ours(*args, valid_lens), book(*args, valid_lens)
    assert torch.all(ours_out[0] == 0)
    # The book's masked softmax turns an all-masked row into uniform weights.
    torch.testing.assert_close(book.attention.attention_weights[:4],
                               torch.full((4, 4, 6), 1 / 6))
    assert book_out[0].abs().max() > 1e-2
    torch.testing.assert_close(ours_out[1], book_out[1], atol=1e-5, rtol=0)


def test_the_book_mutates_its_input_and_we_do_not():
    X = torch.randn(2, 3, 4)
    ours_copy, book_copy = X.clone(), X.clone()
    masked_softmax(ours_copy, torch.tensor([1, 2]))
    d2l.masked_softmax(book_copy, torch.tensor([1, 2]))
    assert torch.equal(ours_copy, X)
    assert not torch.equal(book_copy, X)


def test_the_book_gives_nan_in_float16_for_a_row_without_valid_key():
    X = torch.randn(2, 3, 4, dtype=torch.float16)
    valid_lens = torch.tensor([0, 2])
    assert torch.isnan(d2l.masked_softmax(X.clone(), valid_lens)).any()
    assert not torch.isnan(masked_softmax(X, valid_lens)).any()
