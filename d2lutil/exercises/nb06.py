"""The exercises of notebook 06, "Heads That Learn to Split the Work", with their checks.

``ex1``: which term of the exact quadratic carries the cost of switching a head off (the
proof is open-ended); ``ex2``: the refitted error of heads of width 2 when s of h are kept;
``ex3``: pruning a model whose heads are as wide as a value (the size of the smallest set
that keeps the error below 0.01, the parameters the other heads own; which pair ablation and
gradient importance keep is open-ended, since it depends on the trained model).
The worked solutions are ``notebooks/solutions/06_solutions.ipynb``.

Variants (issue 35): ``ex2`` and ``ex3`` take a student's values (``variants``, the book's
first); ``ex1`` is the same for everyone. Each variant's shape was trained once, as the
exercise's text trains it (at seed 0): every ``ex2`` shape reaches a held-out error near 0
within the 800 steps the text allows, and its refit lands within 0.01 of ``1 - s/h`` for
every subset of heads; every ``ex3`` shape trains to a batch loss below 1e-5 with one head
leaving about 1/2 and some pair of heads below 0.01 (so its smallest set holds two heads).

Points, on the chapter's scale: 1 for a look-up (a value read off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; several parts of one exercise may share its worth.
"""


from . import Exercise, distinct, integer, numbers_close, word

__all__ = ["ex1", "ex2", "ex3"]

ex1 = Exercise(
    1,
    [("the term that carries the cost", word(
        "second", ["first", "second"],
        aliases={"first-order": "first", "first order": "first", "gradient": "first",
                 "-g_i": "first", "second-order": "second", "second order": "second",
                 "hessian": "second", "h_ii/2": "second", "h_ii / 2": "second"},
        mistakes=[("first", "compare |g_i| with H_ii / 2 for each head: the trained model "
                            "sits near a minimum of the loss")]))],
    answers=("cost_term",),
    hints=[
        r"With the weights fixed, the prediction is $\sum_i \xi_i c_i(x)$, linear in the "
        r"mask $\boldsymbol{\xi}$, so the squared error is a polynomial of degree 2 in "
        r"$\boldsymbol{\xi}$: its Taylor expansion at 1 stops at the second order.",
        "Compute `g = torch.autograd.functional.jacobian(mean_loss, ones)` and `H = "
        "torch.autograd.functional.hessian(mean_loss, ones)` in float64, and compare "
        "$|g_i|$ with $H_{ii}/2$ head by head.",
    ],
    solution=(
        r"For each example the prediction is $\sum_i \xi_i c_i(x)$ (the weights do not "
        "depend on the mask and everything after the heads is linear), so the mean loss "
        r"is a quadratic in $\boldsymbol{\xi}$ and its second-order expansion at 1 is "
        r"exact: switching head $i$ off ($\boldsymbol{\delta} = -\mathbf{e}_i$) changes "
        "it by $-g_i + H_{ii}/2$, with $H_{ii}/2$ the mean square of the head's "
        "contribution. On the 4-head model $|g_i|$ is below 1 % of $H_{ii}/2$: the "
        "second-order term carries the cost, because training has left the model near a "
        "minimum. See `solutions/06_solutions.ipynb`."),
    open_part="the proof that the loss is quadratic in the mask, and the comparison of "
              "the two terms head by head",
    # the term: a choice of two, worth nothing on its own (issue 45); its points go to
    # the comparison it rests on, |g_i| against H_ii / 2 head by head, marked by the rubric
    # with the proof
    points=0,
    rubric=[
        (2, "proves the loss quadratic in the mask: the attention weights do not depend "
            "on the mask and everything after the heads is linear, so each prediction "
            "is linear in the mask and its squared error of degree 2"),
        (1, "concludes that the second-order expansion at 1 is exact, and writes the "
            "cost of switching head i off as -g_i + H_ii/2"),
        (2, "compares |g_i| with H_ii/2 head by head on the 4-head model, computed, and "
            "says why the second-order term carries the cost: training has left the "
            "model near a minimum, where the gradient is tiny"),
    ],
    # no variants: the answer is a concept of the lesson
    open_book={0: "which term carries the cost is a fact about any trained model near a "
                  "minimum of its loss (the gradient term is tiny beside the Hessian term), "
                  "not a number that depends on a student's values"},
)

# Exercise 2's variants: heads stay 2 wide (the text's "heads of width 2"), and h heads of
# width p hand on exactly the 2 d_x numbers an output needs (h p = num_hiddens = 2 d_x), so
# that all heads together reaching 0 makes any s of them independent. The answer then
# depends on h alone, 1 - s/h; h = 4 is the lesson's own table, so no variant uses it.
# Five variants, not ten (issue 45): a new shape needs training once, as the text trains
# it, to show that 800 steps bring all its heads to an error near 0.
_EX2_VARIANTS = [
    {"num_hiddens": 16, "h": 8, "d_x": 8},  # the book's
    {"num_hiddens": 10, "h": 5, "d_x": 5},
    {"num_hiddens": 12, "h": 6, "d_x": 6},
    {"num_hiddens": 20, "h": 10, "d_x": 10},
    {"num_hiddens": 24, "h": 12, "d_x": 12},
]


def _refit_floors(width, h, d_x):
    """The refitted error keeping s = 1, ..., h heads of width ``width``."""
    return [max(0.0, 1 - s * min(width, d_x) / (2 * d_x)) for s in range(1, h + 1)]


def _ex2_parts(num_hiddens, h, d_x):
    p = num_hiddens // h
    errors = _refit_floors(p, h, d_x)
    mistakes = [
        ([1 - e for e in errors], "that is the share of the target recovered; the error is "
                                  "the share left over"),
        (_refit_floors(2 * p, h, d_x), f"those are heads of width {2 * p}; here each head "
                                       f"is p = {p} wide"),
        (_refit_floors(p, h, 8), "those count the 16 numbers an output of the book's "
                                 f"values needs; yours are d_x = {d_x} wide"),
    ]
    # 0.01: the refit of a trained model, which the text asks to check the prediction
    # with, lands within 0.01 of it (the module's docstring); the errors are 1/h apart
    return [("refitted error keeping s = 1, ..., h heads", numbers_close(
        errors, atol=0.01, keys=list(range(1, h + 1)),
        mistakes=distinct(errors, mistakes, atol=1e-9)))]


def _ex2_hints(num_hiddens, h, d_x):
    if (num_hiddens, h, d_x) == tuple(_EX2_VARIANTS[0].values()):
        call, sets = "`train(num_heads=8, num_steps=800)`", ""
    else:
        call = (f"`train(num_heads={h}, num_hiddens={num_hiddens}, m={d_x}, "
                "num_steps=800)`; `m` is the width of the values")
        sets = (" `refit_errors` reads `d_x` and the notebook's sets, whose values are 8 "
                f"wide: set `d_x = {d_x}` first and draw them again with values that wide "
                "(`tasks.sample_sequence_copy(1_024, n, d_x, generator=101)` for "
                "`refit_values, refit_targets`, `generator=100` for `test_values, "
                "test_targets`).")
    return [
        f"Count first: how many of the {2 * d_x} numbers an output needs can one head of "
        "width $p$ = `num_hiddens / h` hand on, and so $s$ of them? The rank argument of "
        "the notebook's prediction turns that count into a lower bound on the error.",
        "The bound is reached when the kept heads' numbers are independent: if all "
        f"{h} heads together reach an error near 0, any subset of them is. Check your "
        "prediction with the notebook's `refit_errors` on the model trained for at most "
        f"800 steps ({call}), for a few subsets of each size." + sets,
    ]


ex2 = Exercise(
    2,
    _ex2_parts,
    answers=("refitted_errors",),
    hints=_ex2_hints,
    solution=(
        "$s$ heads of width 2 hand on $2s$ of the 16 numbers an output needs, so the "
        "refitted error is at least $1 - s/8$; since all eight together reach 0, any "
        "$2s$ of their numbers are independent and every subset of $s$ heads leaves "
        "exactly $1 - s/8$: 0.875, 0.75, ..., 0. Trained for at most 800 steps, all 255 "
        "subsets land within 0.01 of it. See `solutions/06_solutions.ipynb`."),
    points=2,  # a derivation (the rank bound for s heads), checked by training
    variants=_EX2_VARIANTS,
)


_D_X = 8  # the notebook's values are 8 wide: W_v reads them

# Exercise 3's variants: other shapes whose heads are at least as wide as a value
# (p = num_hiddens / h >= d_x = 8), so that one head leaves 1/2 and any two different
# mixtures leave 0, as in the notebook's wide model: the smallest set holds two heads
# in every variant, and the parameters of the h - 2 others are a count.
# Five variants, not ten (issue 45): a new shape needs training once to show that one
# head leaves 1/2 and a pair 0 (the smallest set, which the count rests on).
_EX3_VARIANTS = [
    {"num_hiddens": 32, "h": 4},  # the book's
    {"num_hiddens": 24, "h": 3},
    {"num_hiddens": 40, "h": 5},
    {"num_hiddens": 48, "h": 6},
    {"num_hiddens": 48, "h": 4},
]


def _per_head(num_hiddens, h, value_width=_D_X):
    """Rows of W_q, W_k (num_hiddens inputs) and W_v, and columns of W_o, of one head."""
    p = num_hiddens // h
    return 3 * p * num_hiddens + p * value_width


def _ex3_parts(num_hiddens, h):
    per_head = _per_head(num_hiddens, h)
    pruned = (h - 2) * per_head
    book = _EX3_VARIANTS[0]
    mistakes = [] if (num_hiddens, h) == tuple(book.values()) else [
        ((book["h"] - 2) * _per_head(**book), "that is the count for the book's model "
                                              "(num_hiddens 32, h = 4); ex3.values() shows "
                                              "yours")]
    mistakes += [
        (per_head, "that is what one head owns; count every head outside the smallest "
                   "set"),
        (h * per_head, "that is the whole module; count only the pruned heads"),
        ((h - 2) * _per_head(num_hiddens, h, value_width=num_hiddens),
         f"W_v reads values of width {_D_X}, not {num_hiddens}"),
    ]
    return [
        ("size of the smallest set of heads", integer(
            2, what="number of heads", read="a_count", mistakes=[
                (1, "one head hands on one mixture per output and leaves about 1/2"),
                (4, "fewer heads do: look at the pairs in the refit table")])),
        ("parameters the other heads own", integer(
            pruned, what="count of parameters",
            mistakes=[(v, m) for v, m in mistakes if v != pruned]))]


def _ex3_hints(num_hiddens, h):
    p = num_hiddens // h
    return [
        "The notebook's refit table: what does one head leave, and what do two heads with "
        "different mixtures leave?",
        f"With `num_hiddens` {num_hiddens} and $h = {h}$, a head owns $p = {p}$ rows of "
        "$W_q$, of $W_k$ and of $W_v$ and $p$ columns of $W_o$. How many inputs does a "
        "row of each read, and how many outputs does a column of $W_o$ feed? Mind which "
        "of them read the values rather than the hidden state; then count for the heads "
        "outside the smallest set.",
    ]


ex3 = Exercise(
    3,
    _ex3_parts,
    answers=("smallest_set_size", "pruned_params"),
    hints=_ex3_hints,
    solution=(
        "One head leaves about 1/2 and any two heads with well-conditioned (different) "
        r"mixtures leave 0, so the smallest sets are pairs. Each head owns $8 \cdot 32 + "
        r"8 \cdot 32 + 8 \cdot 8 + 32 \cdot 8 = 832$ parameters, so the two pruned heads "
        "own 1,664 of the module's 3,328. Plain ablation and gradient importance score "
        "heads one at a time, so whether the pair they keep works depends on whether its "
        "two mixtures differ, which neither looks at. See `solutions/06_solutions.ipynb`."),
    open_part="the question about ablation and gradient importance",
    # the size: 2 in every variant and printed by the lesson's refit table, so worth
    # nothing on its own (issue 45); the count rests on it (the h - 2 other heads) and
    # carries its point with its own computation (2)
    points=[0, 3],
    rubric=[
        (2, "explains that plain ablation and gradient importance score heads one at a "
            "time, so whether the pair they keep works depends on whether its two "
            "mixtures differ, which neither looks at"),
    ],
    variants=_EX3_VARIANTS,
    open_book={0: "2 in every variant: each variant's heads are at least as wide as a "
                  "value, so one head leaves about 1/2 and any two different mixtures "
                  "leave 0 (the lesson's law, checked by training each shape once)"},
)
