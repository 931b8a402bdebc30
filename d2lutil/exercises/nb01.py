"""The exercises of notebook 01, "One Head, One Mixture", with their checks.

``ex1``: unequal variances (best split, its error, the even split's error);
``ex2``: three positions, one head (the best error, whether it depends on the split);
``ex3``: one head's weights for a given query and keys, and the best error of its
output on copy-both. All three are checked. The worked solutions are
``notebooks/solutions/01_solutions.ipynb``.

Points follow the chapter's scale: 1 for a look-up (read a value off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; the comment beside each ``points=`` says which rule gives each part its points.
"""

import math

from . import Exercise, Wrong, as_array, number, numbers_close, truth

__all__ = ["ex1", "ex2", "ex3"]

TOL = 0.005  # a least-squares estimate on some 10,000 samples lands this close


def _root(value):
    """The relative error instead of its square: a typical slip."""
    return (math.sqrt(value), "this looks like the relative error, a square root; the "
                              "exercise asks for the relative squared error")


def _best_split(answer):
    split = as_array(answer).ravel()
    if split.size != 2:
        raise Wrong(f"a split is two weights (alpha_1, alpha_2), got {split.size} numbers")
    if (split < -1e-9).any() or abs(split.sum() - 1) > 1e-3:
        raise Wrong("the two weights of a head are not negative and sum to 1")
    if abs(split[0] - 0.5) < 0.01:
        raise Wrong("the even split is not the best once the variances differ")
    if abs(split[0] - 1) < 0.01:
        raise Wrong("that split does worse than the even one: compare the two one-hot "
                    "limits")
    if abs(split[0]) > 0.01:
        raise Wrong("another split leaves a smaller error: try the extremes")


ex1 = Exercise(
    1,
    [("best split", _best_split),
     ("its relative squared error", number(
         0.2, atol=TOL, mistakes=[
             (0.5, "0.5 is the answer for equal variances; with sigma = 2 the split matters"),
             (0.8, "0.8 is the error of the other one-hot split, or the share explained "
                   "rather than the share left over"),
             _root(0.2)])),
     ("relative squared error of the even split", number(
         0.32, atol=TOL, mistakes=[
             (0.5, "0.5 is the answer for equal variances; with sigma = 2 the split matters"),
             (0.68, "0.68 is the share of the target explained, not the share left over"),
             _root(0.32)]))],
    hints=[
        "Work per coordinate. The best linear prediction of a target $t$ from the "
        r"mixture $m$ explains $\mathrm{Cov}(t, m)^2 / \mathrm{Var}(m)$ of it; add this "
        "up over the two targets $v_1$ and $v_2$.",
        r"With $m = a_1 v_1 + a_2 v_2$, $\mathrm{Var}(m) = a_1^2 + a_2^2 \sigma^2$, "
        r"$\mathrm{Cov}(v_1, m) = a_1$ and $\mathrm{Cov}(v_2, m) = a_2 \sigma^2$. The "
        r"total variance of the target is $1 + \sigma^2 = 5$.",
        r"The explained share is a weighted average of 1 and $\sigma^2$ with weights "
        r"$a_1^2$ and $a_2^2 \sigma^2$: which split makes it largest? Check your numbers "
        r"with `tasks.readout_errors` after scaling `values[:, 1]` by $\sigma$.",
    ],
    solution=(
        r"The readout explains $\frac{a_1^2 + a_2^2 \sigma^4}{a_1^2 + a_2^2 \sigma^2}$ "
        r"out of $1 + \sigma^2$, a weighted average of 1 and $\sigma^2 = 4$. It is "
        "largest, 4 of 5, when all the weight goes to $v_2$, the value with the larger "
        "variance: the best split is the one-hot limit (0, 1), with relative squared "
        "error $1 - 4/5 = 0.2$. The even split explains 3.4 of 5 and leaves 0.32. Worked "
        "out and measured in `solutions/01_solutions.ipynb`."),
    points=[2, 1, 1],  # the best split, a derivation, 2; the two errors, one
    # computation from the same formula, 2, shared
)

ex2 = Exercise(
    2,
    [("best relative squared error", number(
        2 / 3, atol=TOL, mistakes=[
            (0.5, "0.5 is the answer for two positions; with three, how many directions of "
                  "the values does one mixture keep?"),
            (1 / 3, "1/3 is the share one head keeps, not the share it loses"),
            _root(2 / 3)])),
     ("does it depend on the split?", truth(
         False, wrong_message="compare a few splits by least squares: the error does not "
                              "move beyond sampling noise"))],
    hints=[
        "Repeat the notebook's rotation argument: the mixture pins down the values' "
        "component along the direction of the weights $(a_1, a_2, a_3)$, and nothing "
        "else.",
        "Per coordinate the three values form a vector in 3 dimensions; one mixture "
        "fixes one of them. The other two directions are independent of it and are lost. "
        "Measure with `tasks.readout_errors(split, value_size=16, num_train=20_000, "
        "num_test=20_000)` for splits of length 3.",
    ],
    solution=(
        "One head sees one direction of $(v_{1i}, v_{2i}, v_{3i})$, along its weights; "
        "the two orthogonal directions, uncorrelated with it, are lost. So the best "
        "relative squared error is $2/3$ for every split ($1 - 1/k$ for $k$ positions), "
        "and least squares measures 0.667 for an even, a skewed and a one-hot split "
        "alike. See `solutions/01_solutions.ipynb`."),
    points=[2, 1],  # the error, a derivation, 2; whether it depends on the split, read
    # off least squares for a few splits (a look-up), 1
)

_WEIGHTS = [math.exp(2) / (math.exp(2) + 1), 1 / (math.exp(2) + 1)]  # softmax of (2, 0)


def _softmax(scores):
    """The softmax of a list of scores, as a list."""
    exps = [math.exp(s) for s in scores]
    return [e / sum(exps) for e in exps]


ex3 = Exercise(
    3,
    [("the head's weights (alpha_1, alpha_2)", numbers_close(
        _WEIGHTS, atol=1e-3, mistakes=[
            (_softmax([4, 0]), "the scores are divided by sqrt(d) before the softmax"),
            (_softmax([1, 0]), "the scores are divided by sqrt(d), not by d"),
            ([1.0, 0.0], "the weights are the softmax of the scores, not the scores "
                         "normalised by their sum"),
            (_WEIGHTS[::-1], "the larger weight goes to the key more like the query")])),
     ("best relative squared error of its output", number(
         0.5, atol=TOL, mistakes=[
             (_WEIGHTS[1], "the error does not follow the weight on the other position: "
                           "what does the notebook's proposition say for every split?"),
             (math.sqrt(0.5), "this looks like the relative error, a square root; the "
                              "exercise asks for the relative squared error"),
             (0.0, "one mixture never gives back both values, however sharp the head")]))],
    hints=[
        r"Score each key by $\mathbf{q}^\top\mathbf{k}_i/\sqrt{d}$ with $d = 4$, then take the "
        "softmax of the two scores (`torch.softmax`).",
        "The scores are 2 and 0, so the weights are $e^2/(e^2 + 1)$ and $1/(e^2 + 1)$. "
        "Whatever they are, the head hands on one mixture: check the error with "
        "`tasks.readout_errors(weights, value_size=16, num_train=20_000, "
        "num_test=20_000)`.",
    ],
    solution=(
        r"The scores are $\mathbf{q}^\top\mathbf{k}_1/\sqrt{4} = 4/2 = 2$ and "
        r"$\mathbf{q}^\top\mathbf{k}_2/\sqrt{4} = 0$, so the weights are "
        "$e^2/(e^2 + 1) = 0.881$ and $1/(e^2 + 1) = 0.119$: positive and summing to 1, "
        "a convex mixture. The head is fairly sharp, yet its best linear readout on "
        "copy-both still leaves relative squared error 1/2, as for every split: "
        "least squares measures about 0.50. Sharpening the head only moves which direction "
        "of the two values is lost. See `solutions/01_solutions.ipynb`."),
    points=[2, 1],  # a computation (the softmax of scaled scores), 2; a look-up of
    # the proposition for this split, 1
)
