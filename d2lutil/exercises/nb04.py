"""The exercises of notebook 04, "Self- and Cross-Attention", with their checks.

``ex1``: causal ``valid_lens`` for 3 sequences of 5 tokens, and the weights per sequence
that may be non-zero; ``ex2``: a module with every input width given (parameters before
the first call, their number, the error for keys of the wrong width); ``ex3``: the output
of a query with no valid key when ``bias=True``, predicted (a function of the module; the
check's modules refuse a forward pass). All three are checked. The worked solutions are
``notebooks/solutions/04_solutions.ipynb``.

Points follow the chapter's scale: 1 for a look-up (read a value off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; the comment beside each ``points=`` says which rule gives each part its points.
"""

import numpy as np
import torch

from ..attention import MultiHeadAttention
from . import Exercise, exception_type, function, integer, numbers_close, truth

__all__ = ["ex1", "ex2", "ex3"]

BATCH_SIZE, NUM_STEPS = 3, 5
_CAUSAL = [list(range(1, NUM_STEPS + 1))] * BATCH_SIZE

ex1 = Exercise(
    1,
    [("causal valid_lens", numbers_close(_CAUSAL, mistakes=[
        ([list(range(NUM_STEPS))] * BATCH_SIZE,
         "query 1 may attend to itself, so it sees one key, not none"),
        ([list(range(NUM_STEPS, 0, -1))] * BATCH_SIZE,
         "the wrong way round: a later query sees more keys, not fewer")])),
     ("non-zero weights per sequence", integer(
         NUM_STEPS * (NUM_STEPS + 1) // 2, what="count of weights", mistakes=[
             (NUM_STEPS * (NUM_STEPS - 1) // 2,
              "that leaves out the diagonal: each query may attend to itself"),
             (NUM_STEPS ** 2, "that counts every weight, those on future keys too"),
             (BATCH_SIZE * NUM_STEPS * (NUM_STEPS + 1) // 2,
              "that counts the whole batch; the question asks per sequence")]))],
    hints=[
        "With `valid_lens` of shape `(batch_size, num_queries)`, entry `[i, t]` says how "
        "many keys query $t$ of sequence $i$ may see. Causal: query $t$ (counting from "
        "1) sees keys 1 to $t$.",
        "`torch.arange(1, 6).repeat(3, 1)` gives the lengths. Count the weights that may "
        r"be non-zero: $1 + 2 + \dots + 5$, or count `(weights > 0)` after "
        "`masked_softmax`.",
    ],
    solution=(
        "Each row of `valid_lens` is 1, 2, 3, 4, 5 (`torch.arange(1, T + 1).repeat(3, "
        "1)`, shape (3, 5)): query $t$ sees keys 1 to $t$. `masked_softmax` then puts 0 "
        "above the diagonal and each row sums to 1. A sequence of $T$ tokens has $1 + 2 "
        r"+ \dots + T = T(T + 1)/2$ weights that may be non-zero: 15 for $T = 5$. See "
        "`solutions/04_solutions.ipynb`."),
    points=[2, 1],  # the causal lengths, a computation, 2; the count, read off the
    # masked weights of that computation (a look-up), 1
)

ex2 = Exercise(
    2,
    [("parameters exist before the first call", truth(
        True, wrong_message="only a projection whose input width is missing is lazy; here "
                            "every width is given")),
     ("number of parameters", integer(
         2 * 100 * 100 + 2 * 100 * 64, what="count of parameters", mistakes=[
             (2 * 100 * 100 + 2 * 100 * 64 + 4 * 100,
              "that counts biases; the projections have none unless bias=True"),
             (4 * 100 * 100, "keys and values have width 64 here, not 100"),
             (4 * 100 * 64, "queries and the output have width 100")])),
     ("what keys of width 100 raise", exception_type(ValueError))],
    hints=[
        "A projection is an `nn.LazyLinear` only when its input width is `None`. Count "
        "with `sum(p.numel() for p in attention.parameters())`.",
        "$W_q$ and $W_o$ map 100 to 100, $W_k$ and $W_v$ map 64 to 100, and there are no "
        "biases. For the last part call the module inside `try`/`except` and look at "
        "`type(error)`.",
    ],
    solution=(
        "With every width given, no projection is lazy: the parameters exist at once. "
        r"$W_q$ and $W_o$ are $100 \times 100$, $W_k$ and $W_v$ $100 \times 64$: $2 "
        r"\cdot 100 \cdot 100 + 2 \cdot 100 \cdot 64$ = 32,800 parameters, no biases. "
        "Keys of width 100 do not fit $W_k$: the module raises `ValueError` (\"keys must "
        "have width 64 ...\"). See `solutions/04_solutions.ipynb`."),
    points=[1, 1, 1],  # three look-ups (read off the module, its parameters and the
    # error it raises), 1 each: the most the scale gives a look-up
)


class _Sealed(MultiHeadAttention):
    """The exercise's modules: a forward pass raises, so an answer must predict."""

    def forward(self, *args, **kwargs):
        raise RuntimeError("this module refuses a forward pass: predict its output from "
                           "its parameters")


def _modules():
    """Two small modules with biases, built without touching the caller's random state."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return [(_Sealed(d, h, bias=True, query_size=d, key_size=d, value_size=d),)
                for d, h in ((16, 4), (12, 3))]


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


ex3 = Exercise(
    3,
    [("empty_query_output(attention)", function(
        _empty_query_output, _modules, result_checker=_empty_output_checker,
        describe=lambda case: (f"MultiHeadAttention({case[0].num_hiddens}, "
                               f"{case[0].num_heads}, bias=True)")))],
    hints=[
        "Follow an empty query through the module: its attention weights are all 0. What "
        "is each head's output, and what does $W_o$ make of it?",
        "Every head outputs the zero vector, and so does their concatenation; $W_o$ "
        "applied to 0 leaves only its bias. Return that tensor of the module given to "
        "your function.",
    ],
    solution=(
        "The weights of an empty query are all 0, so every head outputs the zero vector "
        "and so does their concatenation. Only the bias of $W_o$ survives: the output is "
        "$W_o(0)$ = `attention.W_o.bias`, the same vector for every empty query (the "
        "biases of $W_k$ and $W_v$ act on keys and values that get weight 0). See "
        "`solutions/04_solutions.ipynb`."),
    points=2,  # a derivation (follow an empty query through the module), 2
)
