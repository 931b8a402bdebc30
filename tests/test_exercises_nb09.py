"""The checks of notebook 09's exercises, against answers computed here by another route.

Exercise 1's counts come from the dictionary file read with plain string operations;
exercise 2's from the columns of a real MultiHeadAttention's W_o that change the output
when one head's slice of its input changes.
"""

import pathlib

import torch

import d2lutil
from d2lutil import pronunciations
from d2lutil.exercises.nb09 import ex1, ex2


def test_ex1():
    text = pathlib.Path(pronunciations.dictionary_path()).read_text(encoding="utf-8")
    first = {}
    for line in text.splitlines():
        parts = line.split("#")[0].split()
        word = parts[0] if parts else ""
        if 3 <= len(word) <= 12 and word.isascii() and word.isalpha() and word.islower():
            first.setdefault(word, parts[1].rstrip("012"))
    soft = [w for w in first if w[:2] in ("ge", "gi", "gy")]
    jh = sum(first[w] == "JH" for w in soft)
    assert 0 < jh < len(soft)
    assert ex1.check(len(soft), jh)
    assert not ex1.check(len(soft), sum(first[w] == "G" for w in soft))
    assert not ex1.check(len(soft) + 1, jh)


def head_columns(head, num_hiddens=64, num_heads=4):
    """The input columns of W_o that carry `head`'s output (those its head_mask
    zeroes), and the number of entries of W_o's weight that read them."""
    torch.manual_seed(0)
    attention = d2lutil.MultiHeadAttention(num_hiddens, num_heads, query_size=num_hiddens,
                                           key_size=num_hiddens, value_size=num_hiddens)
    X = torch.randn(1, 3, num_hiddens)
    with torch.no_grad():
        full = attention(X, X, X)
        mask = torch.ones(num_heads)
        mask[head] = 0.0
        off = attention(X, X, X, head_mask=mask)
    # the input columns of W_o that the mask zeroed: head's slice of the concatenation
    inputs = {}
    attention.W_o.register_forward_pre_hook(lambda m, i: inputs.update(x=i[0]))
    with torch.no_grad():
        attention(X, X, X, head_mask=mask)
    changed = (inputs["x"] == 0).all(dim=1)[0].nonzero()[:, 0].tolist()
    assert not torch.allclose(full, off)
    return changed, attention.W_o.weight[:, changed].numel()


def test_ex2():
    columns, entries = head_columns(2)
    assert columns == list(range(columns[0], columns[0] + len(columns)))
    assert ex2.check(columns[0], entries)
    assert ex2.check(torch.tensor(columns[0]), float(entries))
    assert not ex2.check(2, entries)
    assert not ex2.check(columns[0], 64 * 64)
    assert not ex2.check(head_columns(3)[0][0], entries)
