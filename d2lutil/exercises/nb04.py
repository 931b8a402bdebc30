"""The exercises of notebook 04, "Self- and Cross-Attention", with their checks.

``ex1``: causal ``valid_lens`` for 3 sequences of 5 tokens, and the weights per sequence
that may be non-zero; ``ex2``: a module with every input width given (parameters before
the first call, their number, the error for keys of the wrong width); ``ex3``: the output
of a query with no valid key when ``bias=True``, predicted (a function of the module; the
check's modules refuse a forward pass). All three are checked. The worked solutions are
``notebooks/solutions/04_solutions.ipynb``.

Exercises 1 and 2 have variants (issue 35): a student's batch size and length, and a
student's module widths; their parts are built from those values (``_ex1_parts``,
``_ex2_parts``). Exercise 3 is the same for everyone; its modules come from
``d2lutil.exercises.cases``, and more of them, of other sizes, are judged at grading.

Points follow the chapter's scale: 1 for a look-up (read a value off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; the comment beside each ``points=`` says which rule gives each part its points.
"""

import numpy as np
import torch

from ..attention import MultiHeadAttention
from . import Exercise, distinct, exception_type, function, integer, numbers_close, truth
from .cases import refusing_attention

__all__ = ["ex1", "ex2", "ex3"]


def _ex1_parts(batch_size, T):
    causal = [list(range(1, T + 1))] * batch_size
    count = T * (T + 1) // 2
    return [
        ("causal valid_lens", numbers_close(causal, mistakes=[
            ([list(range(T))] * batch_size,
             "query 1 may attend to itself, so it sees one key, not none"),
            ([list(range(T, 0, -1))] * batch_size,
             "the wrong way round: a later query sees more keys, not fewer")])),
        ("non-zero weights per sequence", integer(count, what="count of weights", mistakes=[
            (T * (T - 1) // 2, "that leaves out the diagonal: each query may attend to "
                               "itself"),
            (T ** 2, "that counts every weight, those on future keys too"),
            (batch_size * count, "that counts the whole batch; the question asks per "
                                 "sequence")]))]


def _ex1_hints(batch_size, T):
    return [
        "With `valid_lens` of shape `(batch_size, num_queries)`, entry `[i, t]` says how "
        "many keys query $t$ of sequence $i$ may see. Causal: query $t$ (counting from "
        "1) sees keys 1 to $t$.",
        "Every sequence gets the same row of lengths: build one row, then repeat it "
        f"for the {batch_size} sequences of {T} tokens. Count the weights that may be non-zero by "
        "adding up what each query sees, and compare with `(weights > 0)` after "
        "`masked_softmax`.",
    ]


ex1 = Exercise(
    1,
    _ex1_parts,
    answers=("causal_valid_lens", "num_nonzero"),
    hints=_ex1_hints,
    solution=(
        "Each row of `valid_lens` is 1, 2, 3, 4, 5 (`torch.arange(1, T + 1).repeat(3, "
        "1)`, shape (3, 5)): query $t$ sees keys 1 to $t$. `masked_softmax` then puts 0 "
        "above the diagonal and each row sums to 1. A sequence of $T$ tokens has $1 + 2 "
        r"+ \dots + T = T(T + 1)/2$ weights that may be non-zero: 15 for $T = 5$. See "
        "`solutions/04_solutions.ipynb`."),
    points=[2, 1],  # the causal lengths, a computation, 2; the count, read off the
    # masked weights of that computation (a look-up), 1
    # the book's 3 sequences of 5 tokens first; each other T changes both answers, and
    # no count T(T + 1)/2 is a number the lesson prints (T = 4's 10 is)
    variants=[{"batch_size": 3, "T": 5}, {"batch_size": 2, "T": 7},
              {"batch_size": 4, "T": 6}, {"batch_size": 5, "T": 8},
              {"batch_size": 2, "T": 9}, {"batch_size": 2, "T": 10},
              {"batch_size": 3, "T": 11}, {"batch_size": 4, "T": 12},
              {"batch_size": 3, "T": 6}, {"batch_size": 4, "T": 7},
              {"batch_size": 2, "T": 8}],
)


def _ex2_parts(num_hiddens, num_heads, query_size, key_size, value_size):
    d = num_hiddens
    count = d * (query_size + key_size + value_size + d)  # W_q, W_k, W_v, W_o; no biases
    kv = (f"width {key_size}" if key_size == value_size else
          f"widths {key_size} and {value_size}")
    queries = ("queries and the output have width" if query_size == d else
               f"queries have width {query_size} and the output")
    mistakes = [
        (count + 4 * d, "that counts biases; the projections have none unless bias=True"),
        (4 * d * d, f"keys and values have {kv} here, not {d}"),
        (4 * d * key_size, f"{queries} {d}"),
        (d * (query_size + key_size + value_size),
         "that leaves out W_o, the output projection"),
    ]
    return [
        ("parameters exist before the first call", truth(
            True, wrong_message="only a projection whose input width is missing is lazy; "
                                "here every width is given")),
        ("number of parameters", integer(count, what="count of parameters",
                                         mistakes=distinct(count, mistakes))),
        ("what keys of width 100 raise", exception_type(ValueError))]


def _ex2_hints(num_hiddens, num_heads, query_size, key_size, value_size):
    d = num_hiddens
    maps = {}  # "W_q and W_o" map 100 to 100 ...: the projections grouped by input width
    for name, width in (("W_q", query_size), ("W_o", d), ("W_k", key_size),
                        ("W_v", value_size)):
        maps.setdefault(width, []).append(f"${name[0]}_{name[2]}$")
    said = ", ".join(f"{' and '.join(names)} map{'s' if len(names) == 1 else ''} {width} "
                     f"to {d}" for width, names in maps.items())
    return [
        "A projection is an `nn.LazyLinear` only when its input width is `None`. Count "
        "with `sum(p.numel() for p in attention.parameters())`.",
        f"{said}, and there are no biases. For the last part call the "
        "module inside `try`/`except` and look at `type(error)`.",
    ]


ex2 = Exercise(
    2,
    _ex2_parts,
    answers=("params_exist", "num_params", "error_raised"),
    hints=_ex2_hints,
    solution=(
        "With every width given, no projection is lazy: the parameters exist at once. "
        r"$W_q$ and $W_o$ are $100 \times 100$, $W_k$ and $W_v$ $100 \times 64$: $2 "
        r"\cdot 100 \cdot 100 + 2 \cdot 100 \cdot 64$ = 32,800 parameters, no biases. "
        "Keys of width 100 do not fit $W_k$: the module raises `ValueError` (\"keys must "
        "have width 64 ...\"). See `solutions/04_solutions.ipynb`."),
    points=[0, 1, 1],  # whether the parameters exist, a yes or no that is the same for
    # everyone, 0; the count and the error raised, two look-ups (read off the module's
    # parameters and the error it raises), 1 each: the most the scale gives a look-up
    # the book's MultiHeadAttention(100, 5, query_size=100, key_size=64, value_size=64)
    # first; no key_size is 100, so keys of width 100 raise in every variant
    variants=[
        {"num_hiddens": 100, "num_heads": 5, "query_size": 100, "key_size": 64,
         "value_size": 64},
        {"num_hiddens": 64, "num_heads": 4, "query_size": 64, "key_size": 32,
         "value_size": 32},
        {"num_hiddens": 96, "num_heads": 6, "query_size": 80, "key_size": 48,
         "value_size": 40},
        {"num_hiddens": 120, "num_heads": 8, "query_size": 120, "key_size": 80,
         "value_size": 80},
        {"num_hiddens": 80, "num_heads": 4, "query_size": 80, "key_size": 50,
         "value_size": 30},
        {"num_hiddens": 48, "num_heads": 4, "query_size": 48, "key_size": 32,
         "value_size": 32},
        {"num_hiddens": 128, "num_heads": 8, "query_size": 128, "key_size": 64,
         "value_size": 64},
        {"num_hiddens": 72, "num_heads": 6, "query_size": 72, "key_size": 40,
         "value_size": 40},
        {"num_hiddens": 112, "num_heads": 7, "query_size": 112, "key_size": 56,
         "value_size": 48},
        {"num_hiddens": 60, "num_heads": 5, "query_size": 60, "key_size": 36,
         "value_size": 36},
        {"num_hiddens": 90, "num_heads": 6, "query_size": 90, "key_size": 60,
         "value_size": 45},
    ],
    open_book={
        0: "every variant gives every input width, so no projection is lazy: the "
           "parameters exist before the first call for everyone",
        2: "keys of width 100 never fit a variant's W_k (no key_size is 100): every "
           "module raises ValueError",
    },
)


def _public_modules():
    """The modules the check passes to the student's function."""
    return [(refusing_attention(16, 4, 0),), (refusing_attention(12, 3, 1),)]


def _hidden_modules():
    """More modules, of other sizes and seeds, judged only at grading."""
    return [(refusing_attention(d, h, seed),) for d, h, seed in (
        (8, 2, 2), (20, 5, 3), (24, 6, 4), (32, 8, 5), (6, 1, 6), (16, 2, 7))]


def _empty_query_output(attention):
    """Run the module (as MultiHeadAttention) on a batch whose only query has no valid
    key; return its output."""
    d = attention.num_hiddens
    with torch.random.fork_rng(), torch.no_grad():
        torch.manual_seed(1)
        queries, keys = torch.randn(1, 1, d), torch.randn(1, 5, d)
        output = MultiHeadAttention.forward(attention, queries, keys, keys,
                                            torch.tensor([0]))
        return output[0, 0].numpy()


def _empty_output_checker(expected):
    return numbers_close(expected, atol=1e-6, mistakes=[
        (np.zeros_like(expected), "zeros is what a module without biases gives; which bias "
                                  "survives weights that are all 0?")])


def _describe(case):
    num_hiddens, num_heads, seed = case[0].built_by[1]
    return f"MultiHeadAttention({num_hiddens}, {num_heads}, bias=True), seed {seed}"


ex3 = Exercise(
    3,
    [("empty_query_output(attention)", function(
        _empty_query_output, _public_modules, result_checker=_empty_output_checker,
        describe=_describe, hidden=_hidden_modules))],
    answers=("empty_query_output",),
    hints=[
        "Follow an empty query through the module: its attention weights are all 0. What "
        "is each head's output, and what does $W_o$ make of it?",
        "Every head outputs the zero vector, and so does their concatenation. What does "
        "$W_o$, an affine map, make of the zero vector, and where in the module given "
        "to your function do you find it?",
    ],
    solution=(
        "The weights of an empty query are all 0, so every head outputs the zero vector "
        "and so does their concatenation. Only the bias of $W_o$ survives: the output is "
        "$W_o(0)$ = `attention.W_o.bias`, the same vector for every empty query (the "
        "biases of $W_k$ and $W_v$ act on keys and values that get weight 0). See "
        "`solutions/04_solutions.ipynb`."),
    points=2,  # a derivation (follow an empty query through the module), 2
    open_book={0: "the answer is the lesson itself, a function of the module "
                  "(W_o's bias); it is judged on modules the student never saw at grading "
                  "(hidden cases of other sizes and seeds)"},
)
