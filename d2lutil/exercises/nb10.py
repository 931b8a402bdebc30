"""The exercises of notebook 10, "Debugging Multi-Head Attention", with their checks.

``ex1``: the split and the merge of heads in the head-axis layout (two functions);
``ex2``: a whole multi-head attention class with the book's interface, checked against the
library's with the same weights and biases, with and without dropout; a class that takes
its attention from d2lutil, d2l or torch is refused (``modules.implementation``); a
student's version asks for a layout and a causal mask (``public.class_checker``);
``ex3``: a behaviour test that fails the ``repeat`` for ``repeat_interleave`` bug and
passes every correct module, given modules whose names and types say nothing and with the
library's behaviour tests refused (``modules.behaviour_test``). Points by the chapter's
scale (1 look-up, 2 computation or derivation, 3 implementation or proof): exercises 1
and 3 are an implementation each, 3 points; exercise 2 is a whole module, three
implementations (the attention, its masks, bias and dropout), 9 points, so that exercises 1
and 2, lecture 1's homework with notebooks 1 to 5, are about a quarter of its points. A
student's version of exercise 2 asks for one layout and a causal mask (``_EX2_VARIANTS``).
The worked solutions are ``notebooks/solutions/10_solutions.ipynb``.
"""

import torch

from . import Exercise, function, numbers_close, public
from .modules import LAYOUTS

__all__ = ["ex1", "ex2", "ex3"]


def _split(X, num_heads):
    """(batch_size, length, num_hiddens) -> (batch_size, num_heads, length, head_size)."""
    return X.reshape(*X.shape[:2], num_heads, -1).transpose(1, 2)


def _merge(X):
    """(batch_size, num_heads, length, head_size) -> (batch_size, length, num_hiddens)."""
    return X.transpose(1, 2).reshape(X.shape[0], X.shape[2], -1)


def _tensor(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _split_cases():
    return [(_tensor(seed, *shape), h) for seed, (shape, h) in enumerate(
        [((2, 3, 8), 2), ((1, 5, 12), 3), ((3, 4, 8), 4), ((2, 2, 6), 3), ((1, 6, 16), 8)])]


def _hidden_split_cases():
    """Grading's cases: other shapes and head counts than the notebook's."""
    return [(_tensor(50 + seed, *shape), h) for seed, (shape, h) in enumerate(
        [((2, 5, 15), 5), ((4, 1, 6), 2), ((1, 7, 20), 4), ((3, 2, 9), 9)])]


def _hidden_merge_cases():
    return [(_tensor(60 + seed, *shape),) for seed, shape in enumerate(
        [(2, 5, 3, 3), (4, 2, 1, 5), (1, 3, 7, 4), (3, 9, 2, 1)])]


def _merge_cases():
    return [(_tensor(10 + seed, *shape),) for seed, shape in enumerate(
        [(2, 2, 3, 4), (1, 3, 5, 4), (3, 4, 4, 2), (2, 1, 2, 6), (1, 8, 6, 2)])]


OPEN_BOOK = ("the answer is the lesson itself, the same for everyone; grading also judges it "
             "on cases the notebook does not hold")

MIXED = ("positions are mixed across heads: a reshape alone does not split the heads off "
         "(a head's block must hold its own features of every position); move the head "
         "axis with a transpose")


def _split_result(expected):
    # The result of a reshape straight to (batch, heads, length, head_size), read off the
    # right result: X is expected.transpose(1, 2) merged back.
    b, h, n, p = expected.shape
    mixed = expected.transpose(1, 2).reshape(b, h, n, p)
    return numbers_close(expected, atol=1e-6, mistakes=[(mixed, MIXED)])


def _merge_result(expected):
    return numbers_close(expected, atol=1e-6)


ex1 = Exercise(
    1,
    [("split_heads(X, num_heads)", function(
        _split, _split_cases, result_checker=_split_result, hidden=_hidden_split_cases,
        describe=lambda case: f"X of shape {tuple(case[0].shape)}, num_heads = {case[1]}")),
     ("merge_heads(X)", function(
         _merge, _merge_cases, result_checker=_merge_result, hidden=_hidden_merge_cases,
         describe=lambda case: f"X of shape {tuple(case[0].shape)}"))],
    answers=("split_heads", "merge_heads"),
    hints=[
        "Split: first make the head axis with a reshape to (batch_size, length, num_heads, "
        "head_size); then put it second. Which function swaps two axes?",
        "`X.reshape(*X.shape[:2], num_heads, -1).transpose(1, 2)`; the merge undoes both "
        "steps in the opposite order: a transpose back, then a reshape to (batch_size, "
        "length, num_heads * head_size).",
    ],
    solution=(
        "`split_heads`: `X.reshape(batch_size, length, num_heads, -1).transpose(1, 2)`, so "
        "head j holds features j*p to (j+1)*p - 1 of every position. `merge_heads`: "
        "`X.transpose(1, 2).reshape(batch_size, length, -1)`. A reshape straight to "
        "(batch_size, num_heads, length, head_size) has the right shape but cuts the memory "
        "of each sequence into consecutive blocks, so a head gets features of several "
        "positions: a shape check passes, a value check does not. See "
        "`solutions/10_solutions.ipynb`."),
    points=[2, 1],  # an implementation, 3 points, over its two functions
    open_book={0: OPEN_BOOK, 1: OPEN_BOOK},
)

# Exercise 2's variants: the book's takes any layout and no causal mask, and the worked
# solutions write that class in three layouts. A student's asks for one layout and a causal
# mask aligned one way, so no public answer is theirs; the sizes lead their messages.
_EX2_VARIANTS = [{"layout": "any", "causal": "no", "num_hiddens": 8, "num_heads": 2}] + [
    {"layout": layout, "causal": causal, "num_hiddens": 4 * h, "num_heads": h}
    for layout in LAYOUTS for causal in ("top-left", "bottom-right") for h in (3, 4)]


def _ex2_hints(layout, causal, num_hiddens, num_heads):
    shape = (f"Your class computes in {LAYOUTS[layout]}: the check tells the layout by the "
             "shape of the scores it hands to the softmax (or to "
             "`F.scaled_dot_product_attention`). " if layout != "any" else "")
    future = {"no": "",
              "top-left": " Your class is also causal, aligned top-left: query $i$ may see "
                          "keys $0, \\ldots, i$ only, and never past its valid length.",
              "bottom-right": " Your class is also causal, aligned bottom-right: query $i$ "
                              "may see keys $0, \\ldots, i + m - n$ only ($n$ queries, $m$ "
                              "keys), and never past its valid length."}[causal]
    return [
        shape + "Project with `W_q`, `W_k`, `W_v`; split the heads (exercise 1); scaled dot "
        "products over head_size = num_hiddens / num_heads; mask the keys past `valid_lens` "
        "for every head of the sequence (a length per sequence or per query); softmax; "
        "dropout on the weights; mix the values; merge the heads; `W_o`. Keep `num_heads` "
        "as an attribute, pass `bias` on to the four projections, and use "
        "`nn.Dropout(dropout)`, which changes nothing in `eval()` mode.",
        "The mask: `torch.arange(num_keys) < valid_lens[..., None]` gives (batch_size, "
        "num_keys) or (batch_size, num_queries, num_keys); add the head axis at 1 so it "
        "broadcasts over the heads, and fill the scores where it is False with a large "
        "negative number before the softmax." + future,
    ]


ex2 = Exercise(
    2,
    lambda layout, causal, num_hiddens, num_heads: [
        ("your multi-head attention class",
         public.class_checker(layout, causal, num_hiddens, num_heads))],
    answers=("MyMultiHeadAttention",),
    hints=_ex2_hints,
    solution=(
        "Any layout works for the book's version: heads folded into the batch (the book's), "
        "a head axis, or a loop over heads. `solutions/10_solutions.ipynb` writes all three "
        "and each passes. The slips the check names: a reshape without the transpose, the "
        "scores divided by sqrt(num_hiddens) instead of sqrt(head_size), a mask the wrong "
        "way round or not broadcast over the heads, keys and values taken from the "
        "queries, dropout never applied or left on in `eval()` mode (`F.dropout` needs "
        "`training=self.training`), `bias` not passed on to the projections, a lazy `W_o` "
        "never called. A student's version asks for one layout and a causal mask: the "
        "same class, in that layout, with the future masked too (notebook 10's causal "
        "alignment)."),
    points=9,  # a whole module, three implementations: the attention, its masks, bias and dropout
    variants=_EX2_VARIANTS,
)

ex3 = Exercise(
    3,
    [("your behaviour test", public.test_checker())],
    answers=("test_each_sequence_keeps_its_mask",),
    hints=[
        "The bug gives head j of sequence i the valid length of another sequence. Which "
        "batch makes that visible? Several heads, and sequences of different lengths.",
        "Make a module, run it on a batch whose sequences have different `valid_lens`; "
        "then change a key and value past a sequence's valid length and run it again. A "
        "correct module's output must not move; assert that with `torch.allclose`.",
    ],
    solution=(
        "For example: `m = make_module(8, 2)`; keys and values of shape (3, 5, 8); "
        "`valid_lens = torch.tensor([1, 5, 3])`; change every key and value of sequence 0 "
        "after its first; assert that the output of sequence 0 is unchanged (and likewise "
        "for the others). With `repeat`, some head of sequence 0 reads another sequence's "
        "length, so it sees the changed keys. A batch of one sequence, one head, or equal "
        "lengths cannot catch it (notebook 3's exercise 3). See "
        "`solutions/10_solutions.ipynb`."),
    points=3,  # an implementation (of a test)
    open_book={0: OPEN_BOOK},
)
