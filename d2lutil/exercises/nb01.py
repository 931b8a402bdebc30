"""The exercises of notebook 01, "One Head, One Mixture", with their checks.

``ex1``: unequal variances (best split, its error, the even split's error);
``ex2``: three positions, one head (the best error, whether it depends on the split);
``ex3``: the smallest ``N`` at which the expected in-sample error prints as 0.707.
All three are checked. The worked solutions are ``notebooks/solutions/01_solutions.ipynb``.
"""

import math

from . import Exercise, Wrong, as_array, integer, number, truth

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
)

ex3 = Exercise(
    3,
    [("smallest N", integer(
        9327, what="number of samples", mistakes=[
            (9326, "one sample short: at that N the expected error still prints as 0.706"),
            (10_000, "10,000 is the notebook's sample size, not the smallest N that works"),
            (math.ceil(16 / (1 - 2 * 0.707 ** 2)),
             "that is where the error reaches 0.707 itself; a printed 0.707 starts lower, "
             "where rounding to three decimals gives 0.707"),
            (math.floor(16 / (1 - 2 * 0.707 ** 2)),
             "that is where the error reaches 0.707 itself; a printed 0.707 starts lower, "
             "where rounding to three decimals gives 0.707")]))],
    hints=[
        "A number prints as 0.707 with three decimals once it is at least 0.7065.",
        r"Solve $\sqrt{(1 - d/N) / 2} \ge 0.7065$ for $N$, then take the smallest whole "
        "$N$; check it with `f\"{value:.3f}\"` at $N$ and $N - 1$.",
    ],
    solution=(
        r"The error prints as 0.707 once $\sqrt{(1 - d/N)/2} \ge 0.7065$, i.e. $N \ge d "
        r"/ (1 - 2 \cdot 0.7065^2) = 9326.6$ for $d = 16$, so the smallest $N$ is 9,327 "
        "(`math.ceil`). At $N$ = 9,326 the value is 0.70649995 and prints as 0.706. The "
        "notebook's 10,000 samples clear the line by little. See "
        "`solutions/01_solutions.ipynb`."),
)
