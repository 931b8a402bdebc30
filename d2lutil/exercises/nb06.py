"""The exercises of notebook 06, "Heads That Learn to Split the Work", with their checks.

``ex1``: which term of the exact quadratic carries the cost of switching a head off (the
proof is open-ended); ``ex2``: the refitted error of heads of width 2 when s of eight are
kept; ``ex3``: pruning the wide model (the size of the smallest set that keeps the error
below 0.01, the parameters the other heads own; which pair ablation and gradient importance
keep is open-ended, since it depends on the trained model).
The worked solutions are ``notebooks/solutions/06_solutions.ipynb``.

Points, on the chapter's scale: 1 for a look-up (a value read off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; several parts of one exercise may share its worth.
"""

import numbers

from . import Exercise, Wrong, integer, numbers_close, word
from .checkers import around

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
    open_part="the proof that the loss is quadratic in the mask",
    # the term: a computation, g and H compared head by head (2); the proof is the open
    # part, marked by its rubric (3)
    points=2,
    rubric=[
        (2, "proves the loss quadratic in the mask: the attention weights do not depend "
            "on the mask and everything after the heads is linear, so each prediction "
            "is linear in the mask and its squared error of degree 2"),
        (1, "concludes that the second-order expansion at 1 is exact, and writes the "
            "cost of switching head i off as -g_i + H_ii/2"),
    ],
)

ex2 = Exercise(
    2,
    [("refitted error keeping s = 1, ..., 8 heads", numbers_close(
        [1 - k / 8 for k in range(1, 9)], atol=0.01, keys=list(range(1, 9)), mistakes=[
            ([k / 8 for k in range(1, 9)], "that is the share of the target recovered; the "
                                           "error is the share left over"),
            ([max(0.0, 1 - k / 4) for k in range(1, 9)],
             "those are heads of width 4; here each head is p = 2 wide")]))],
    hints=[
        "Count first: how many of the 16 numbers an output needs can one head of width "
        "$p$ = `num_hiddens / h` hand on, and so $s$ of them? The rank argument of the "
        "notebook's prediction turns that count into a lower bound on the error.",
        "The bound is reached when the kept heads' numbers are independent: if all eight "
        "heads together reach an error near 0, any subset of them is. Check your "
        "prediction with the notebook's `refit_errors` on the model trained for at most "
        "800 steps (`train(num_heads=8, num_steps=800)`), for a few subsets of each size.",
    ],
    solution=(
        "$s$ heads of width 2 hand on $2s$ of the 16 numbers an output needs, so the "
        "refitted error is at least $1 - s/8$; since all eight together reach 0, any "
        "$2s$ of their numbers are independent and every subset of $s$ heads leaves "
        "exactly $1 - s/8$: 0.875, 0.75, ..., 0. Trained for at most 800 steps, all 255 "
        "subsets land within 0.01 of it. See `solutions/06_solutions.ipynb`."),
    points=2,  # a derivation (the rank bound for s heads), checked by training
)

def _set_size(expected, mistakes):
    """A checker for the number of heads in a set, telling a set of heads apart."""
    count = integer(expected, what="number of heads", mistakes=mistakes)

    a_set = ("that looks like a set of heads; the question asks for its size, the number "
             "of heads it holds")

    @around(count, mistakes=[*mistakes, *((form(range(expected)), a_set)
                                          for form in (set, frozenset, list, tuple))])
    def check(answer):
        is_set = isinstance(answer, (set, frozenset)) or (
            isinstance(answer, (list, tuple)) and len(answer) > 1
            and all(isinstance(x, numbers.Integral) for x in answer))
        if is_set:
            raise Wrong(a_set)
        count(answer)

    return check


_PER_HEAD = 8 * 32 + 8 * 32 + 8 * 8 + 32 * 8  # rows of W_q, W_k, W_v and columns of W_o

ex3 = Exercise(
    3,
    [("size of the smallest set of heads", _set_size(
        2, mistakes=[
            (1, "one head hands on one mixture per output and leaves about 1/2"),
            (4, "fewer heads do: look at the pairs in the refit table")])),
     ("parameters the other heads own", integer(
         2 * _PER_HEAD, what="count of parameters", mistakes=[
             (_PER_HEAD, "that is one head; two heads are pruned"),
             (4 * _PER_HEAD, "that is the whole module; count only the pruned heads"),
             (2 * (4 * 8 * 32), "W_v reads values of width 8, not 32")]))],
    hints=[
        "The notebook's refit table: what does one head leave, and what do two heads with "
        "different mixtures leave?",
        "With `num_hiddens` 32 and $h = 4$, a head owns $p = 8$ rows of $W_q$ and $W_k$ "
        "(32 inputs each), 8 rows of $W_v$ (8 inputs) and 8 columns of $W_o$ (32 "
        "outputs). Count for the heads you prune.",
    ],
    solution=(
        "One head leaves about 1/2 and any two heads with well-conditioned (different) "
        r"mixtures leave 0, so the smallest sets are pairs. Each head owns $8 \cdot 32 + "
        r"8 \cdot 32 + 8 \cdot 8 + 32 \cdot 8 = 832$ parameters, so the two pruned heads "
        "own 1,664 of the module's 3,328. Plain ablation and gradient importance score "
        "heads one at a time, so whether the pair they keep works depends on whether its "
        "two mixtures differ, which neither looks at. See `solutions/06_solutions.ipynb`."),
    open_part="the question about ablation and gradient importance",
    # the size: a look-up in the notebook's refit table (1); the parameters: a
    # computation (2)
    points=[1, 2],
    rubric=[
        (2, "explains that plain ablation and gradient importance score heads one at a "
            "time, so whether the pair they keep works depends on whether its two "
            "mixtures differ, which neither looks at"),
    ],
)
