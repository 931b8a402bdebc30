"""The exercises of notebook 01, "One Head, One Mixture", with their checks.

``ex1``: unequal variances (best split, its error, the even split's error);
``ex2``: ``k`` positions, one head (the best error, whether it depends on the split);
``ex3``: one head's weights for a given query and keys, and the best error of its
output on copy-both. All three are checked. The worked solutions are
``notebooks/solutions/01_solutions.ipynb``.

Each exercise has variants (issue 35): the book's values first (``sigma = 2``, ``k = 3``,
``d = 4`` with its query and key), then the values a student's id may pick. Every part
whose answer depends on them is built from them, by formula; the others are open-book.

Points follow the chapter's scale: 1 for a look-up (read a value off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; the comment beside each ``points=`` says which rule gives each part its points.
"""

import math

from . import Exercise, distinct, number, numbers_close, truth

__all__ = ["ex1", "ex2", "ex3"]

TOL = 0.005  # a least-squares estimate on some 10,000 samples lands this close


def _root(value):
    """The relative error instead of its square: a typical slip."""
    return (math.sqrt(value), "this looks like the relative error, a square root; the "
                              "exercise asks for the relative squared error")


# --- exercise 1: v_2 with standard deviation sigma -----------------------------------------

def _explained(a1, a2, sigma):
    """The share of the target 1 + sigma^2 that the best readout of a1 v1 + a2 v2 keeps."""
    return (a1**2 + a2**2 * sigma**4) / (a1**2 + a2**2 * sigma**2) / (1 + sigma**2)


def _ex1_parts(sigma):
    best = (0.0, 1.0) if sigma > 1 else (1.0, 0.0)  # all on the larger variance
    other = best[::-1]
    best_error = 1 - _explained(*best, sigma)
    even_error = 1 - _explained(0.5, 0.5, sigma)
    equal = (0.5, f"that is the answer for equal variances; with sigma = {sigma:g} the "
                  "split matters")
    return [
        # the best split is exactly one-hot: only round-off may stand between it and
        # the answer, so (0.99, 0.01), a split that is merely close, is refused
        ("best split", numbers_close(best, atol=1e-6, mistakes=[
            ((0.5, 0.5), "the even split is not the best once the variances differ"),
            (other, "that split does worse than the even one: compare the two one-hot "
                    "limits")])),
        ("its relative squared error", number(
            best_error, atol=TOL, mistakes=distinct(best_error, [
                equal,
                (1 - best_error, "that is the error of the other one-hot split, or the "
                                 "share explained rather than the share left over"),
                _root(best_error)], atol=2 * TOL))),
        ("relative squared error of the even split", number(
            even_error, atol=TOL, mistakes=distinct(even_error, [
                equal,
                (1 - even_error, "that is the share of the target explained, not the share "
                                 "left over"),
                _root(even_error)], atol=2 * TOL)))]


def _ex1_hints(sigma):
    return [
        "Work per coordinate. The best linear prediction of a target $t$ from the "
        r"mixture $m$ explains $\mathrm{Cov}(t, m)^2 / \mathrm{Var}(m)$ of it; add this "
        "up over the two targets $v_1$ and $v_2$.",
        r"With $m = a_1 v_1 + a_2 v_2$, $\mathrm{Var}(m) = a_1^2 + a_2^2 \sigma^2$, "
        r"$\mathrm{Cov}(v_1, m) = a_1$ and $\mathrm{Cov}(v_2, m) = a_2 \sigma^2$. The "
        rf"total variance of the target is $1 + \sigma^2 = {1 + sigma**2:g}$.",
        r"The explained share is a weighted average of 1 and $\sigma^2$ with weights "
        r"$a_1^2$ and $a_2^2 \sigma^2$: which split makes it largest? Check your numbers "
        rf"with `tasks.readout_errors` after scaling `values[:, 1]` by $\sigma = {sigma:g}$.",
    ]


ex1 = Exercise(
    1,
    _ex1_parts,
    answers=("best_split", "best_error", "even_error"),
    hints=_ex1_hints,
    solution=(
        r"The readout explains $\frac{a_1^2 + a_2^2 \sigma^4}{a_1^2 + a_2^2 \sigma^2}$ "
        r"out of $1 + \sigma^2$, a weighted average of 1 and $\sigma^2 = 4$. It is "
        "largest, 4 of 5, when all the weight goes to $v_2$, the value with the larger "
        "variance: the best split is the one-hot limit (0, 1), with relative squared "
        "error $1 - 4/5 = 0.2$. The even split explains 3.4 of 5 and leaves 0.32. Worked "
        "out and measured in `solutions/01_solutions.ipynb`."),
    points=[2, 1, 1],  # the best split, a derivation, 2; the two errors, one
    # computation from the same formula, 2, shared
    # sigma < 1 in every student's variant: the best split is then (1, 0), never the
    # book's (0, 1); and not 1/2, whose errors are the book's (sigma and 1/sigma give the
    # same errors)
    variants=[{"sigma": 2}, {"sigma": 0.25}, {"sigma": 0.4}, {"sigma": 0.6},
              {"sigma": 0.75}, {"sigma": 0.2}, {"sigma": 0.3}, {"sigma": 0.35},
              {"sigma": 0.45}, {"sigma": 0.55}, {"sigma": 0.7}],
)


# --- exercise 2: k positions, one head --------------------------------------------------------

def _ex2_parts(k):
    error = 1 - 1 / k
    return [
        ("best relative squared error", number(
            error, atol=TOL, mistakes=distinct(error, [
                (0.5, "that is the answer for two positions; with more, how many "
                      "directions of the values does one mixture keep?"),
                (1 / k, "that is the share one head keeps, not the share it loses"),
                _root(error)], atol=2 * TOL))),
        ("does it depend on the split?", truth(
            False, wrong_message="compare a few splits by least squares: the error does "
                                 "not move beyond sampling noise"))]


def _ex2_hints(k):
    return [
        "Repeat the notebook's rotation argument: the mixture pins down the values' "
        f"component along the direction of the weights $(a_1, \\ldots, a_{{{k}}})$, and "
        "nothing else.",
        f"Per coordinate the {k} values form a vector in {k} dimensions, and one mixture "
        "is one number. How many of its directions can one number pin down, and what "
        "becomes of the others? Measure with `tasks.readout_errors(split, value_size=16, "
        f"num_train=20_000, num_test=20_000)` for splits of length {k}.",
    ]


ex2 = Exercise(
    2,
    _ex2_parts,
    answers=("error_k_positions", "depends_on_split"),
    hints=_ex2_hints,
    solution=(
        "One head sees one direction of $(v_{1i}, v_{2i}, v_{3i})$, along its weights; "
        "the two orthogonal directions, uncorrelated with it, are lost. So the best "
        "relative squared error is $2/3$ for every split ($1 - 1/k$ for $k$ positions), "
        "and least squares measures 0.667 for an even, a skewed and a one-hot split "
        "alike. See `solutions/01_solutions.ipynb`."),
    # no points: the error is what tasks.theory_error returns for any split of length
    # k (its docstring states 1 - rank/k), and whether it depends on the split is a yes
    # or no that rests on that number; the exercise is practice for exercise 3 and
    # notebook 2 (tests/exercises/test_exercises_understanding.py)
    points=[0, 0],
    variants=[{"k": 3}, {"k": 4}, {"k": 5}, {"k": 6}, {"k": 8}],
    open_book={1: "the error never depends on the split, whatever k: the notebook's "
                  "proposition"},
)


# --- exercise 3: one head's weights ------------------------------------------------------------

def _softmax(scores):
    """The softmax of a list of scores, as a list."""
    exps = [math.exp(s) for s in scores]
    return [e / sum(exps) for e in exps]


def _scores(d, q, k1):
    """q.k_1 and q.k_2 (k_2 = 0), not yet scaled."""
    return [float(sum(a * b for a, b in zip(q, k1, strict=True))), 0.0]


_BOOK_WEIGHTS = _softmax([2, 0])  # the book's weights, for part 2's slip


def _ex3_parts(d, q, k1):
    raw = _scores(d, q, k1)
    weights = _softmax([s / math.sqrt(d) for s in raw])
    slips = [
        (_softmax(raw), "the scores are divided by sqrt(d) before the softmax"),
        (_softmax([s / d for s in raw]), "the scores are divided by sqrt(d), not by d"),
        ([s / sum(raw) for s in raw], "the weights are the softmax of the scores, not the "
                                      "scores normalised by their sum"),
        (weights[::-1], "the larger weight goes to the key more like the query")]
    return [
        ("the head's weights (alpha_1, alpha_2)", numbers_close(
            weights, atol=1e-3, mistakes=distinct(weights, slips, atol=2e-3))),
        ("best relative squared error of its output", number(
            0.5, atol=TOL, mistakes=[
                (_BOOK_WEIGHTS[1], "the error does not follow the weight on the other "
                                   "position: what does the notebook's proposition say for "
                                   "every split?"),
                (math.sqrt(0.5), "this looks like the relative error, a square root; the "
                                 "exercise asks for the relative squared error"),
                (0.0, "one mixture never gives back both values, however sharp the "
                      "head")]))]


def _ex3_hints(d, q, k1):
    return [
        r"Score each key by $\mathbf{q}^\top\mathbf{k}_i/\sqrt{d}$ with "
        f"$d = {d}$, then take the softmax of the two scores (`torch.softmax`).",
        r"The second key is $\mathbf{0}$, so its score is 0. Whatever the weights, the "
        "head hands on one mixture: check the error with "
        "`tasks.readout_errors(weights, value_size=16, num_train=20_000, "
        "num_test=20_000)`.",
    ]


ex3 = Exercise(
    3,
    _ex3_parts,
    answers=("head_weights", "head_error"),
    hints=_ex3_hints,
    solution=(
        r"The scores are $\mathbf{q}^\top\mathbf{k}_1/\sqrt{4} = 4/2 = 2$ and "
        r"$\mathbf{q}^\top\mathbf{k}_2/\sqrt{4} = 0$, so the weights are "
        "$e^2/(e^2 + 1) = 0.881$ and $1/(e^2 + 1) = 0.119$: positive and summing to 1, "
        "a convex mixture. The head is fairly sharp, yet its best linear readout on "
        "copy-both still leaves relative squared error 1/2, as for every split: "
        "least squares measures about 0.50. Sharpening the head only moves which direction "
        "of the two values is lost. See `solutions/01_solutions.ipynb`."),
    points=[2, 0],  # a computation (the softmax of scaled scores), 2; the error, 0:
    # the lesson prints it (1/2 for every split of two positions)
    # k_2 = 0 in every variant; the first key's scaled score is 2 in the book's, 1.5,
    # 2.5, sqrt(2), 5/3, 4/3, 7/3, 6/sqrt(8), 5/4, 7/4 and 9/4 in the others
    variants=[{"d": 4, "q": [1, 1, 1, 1], "k1": [1, 1, 1, 1]},
              {"d": 4, "q": [1, 1, 1, 1], "k1": [1, 1, 1, 0]},
              {"d": 4, "q": [2, 1, 1, 1], "k1": [1, 1, 1, 1]},
              {"d": 8, "q": [1, 1, 1, 1, 1, 1, 1, 1], "k1": [1, 1, 1, 1, 0, 0, 0, 0]},
              {"d": 9, "q": [1, 1, 1, 1, 1, 1, 1, 1, 1],
               "k1": [1, 1, 1, 1, 1, 0, 0, 0, 0]},
              {"d": 9, "q": [1, 1, 1, 1, 1, 1, 1, 1, 1],
               "k1": [1, 1, 1, 1, 0, 0, 0, 0, 0]},
              {"d": 9, "q": [1, 1, 1, 1, 1, 1, 1, 1, 1],
               "k1": [1, 1, 1, 1, 1, 1, 1, 0, 0]},
              {"d": 8, "q": [1, 1, 1, 1, 1, 1, 1, 1], "k1": [1, 1, 1, 1, 1, 1, 0, 0]},
              {"d": 16, "q": [1] * 16, "k1": [1] * 5 + [0] * 11},
              {"d": 16, "q": [1] * 16, "k1": [1] * 7 + [0] * 9},
              {"d": 16, "q": [1] * 16, "k1": [1] * 9 + [0] * 7}],
    open_book={1: "1/2 for every head over two positions, whatever its weights: the "
                  "notebook's proposition (k = 2, one head)"},
)
