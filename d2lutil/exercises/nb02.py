"""The exercises of notebook 02, "Two Heads Suffice", with their checks.

``ex1``: four heads over three positions (the best error);
``ex2``: the float32 threshold below which ``gelsd`` merges two heads;
``ex3``: any two different heads solve ``k = 2`` (a function of ``a`` and ``b``; the proof
is open-ended). The worked solutions are ``notebooks/solutions/02_solutions.ipynb``.
"""

import math

import numpy as np

from . import Exercise, function, number

__all__ = ["ex1", "ex2", "ex3"]

TOL = 0.005  # a least-squares estimate on some 10,000 samples lands this close
NUM_SAMPLES = 2_000
EPS32 = float(np.finfo(np.float32).eps)

ex1 = Exercise(
    1,
    [("best relative squared error", number(
        1 / 3, atol=TOL, mistakes=[
            (0.0, "four heads are more than three positions, but what matters is how many "
                  "independent directions their weights span"),
            (2 / 3, "2/3 is what one head leaves; how many independent rows do these four "
                    "weights have?"),
            (0.25, "the error does not fall with the number of heads but with the rank of "
                   "their weights"),
            (math.sqrt(1 / 3), "this looks like the relative error, a square root; the "
                               "exercise asks for the relative squared error")]))],
    hints=[
        r"The best linear readout leaves $1 - \operatorname{rank}(A)/k$. Which positions "
        "do the four rows of weights ever look at?",
        "Every row has a 0 in the third column, so the rows lie in a plane. Compute "
        r"`torch.linalg.matrix_rank` of the $4 \times 3$ matrix, then measure with "
        "`tasks.readout_errors(A, value_size=8, num_train=10_000, num_test=40_000)`.",
    ],
    solution=(
        "All four rows lie in the plane of the first two unit vectors, so "
        r"$\operatorname{rank}(A) = 2$ and the best relative squared error is $1 - 2/3 = "
        "1/3$: position 3 is never looked at, however many heads there are. Least "
        "squares measures 0.334. See `solutions/02_solutions.ipynb`."),
)

ex2 = Exercise(
    2,
    [("threshold delta*", number(
        EPS32 * NUM_SAMPLES / 2, factor=1.5, mistakes=[
            (EPS32 * NUM_SAMPLES, "too large by a factor of about 2: what are the singular "
                                  "values of the mixing matrix A(delta)?"),
            (float(np.finfo(np.float64).eps) * NUM_SAMPLES / 2,
             "that uses float64's machine epsilon; the samples here are float32"),
            (EPS32 * 2 * 16 / 2, "rcond is scaled by the larger side of the feature matrix: "
                                 "its rows, not its columns"),
            (EPS32 / 2, "the default rcond is epsilon times the larger side of the matrix")]))],
    hints=[
        "`gelsd` drops singular values below `rcond` times the largest one; the default "
        "`rcond` is the machine epsilon of the dtype times the larger side of the matrix.",
        r"The mixing matrix $A(\delta) = [[0.5 + \delta, 0.5 - \delta], [0.5 - \delta, "
        r"0.5 + \delta]]$ has singular values 1 and $2\delta$, and the features inherit "
        r"about that ratio. When is $2\delta$ smaller than `rcond`? Check with "
        "`tasks.readout_errors(..., dtype=torch.float32)` at three times and a third of "
        "your threshold.",
    ],
    solution=(
        r"$\mathrm{rcond} = \varepsilon \cdot n$ with $\varepsilon$ = "
        "`torch.finfo(torch.float32).eps` and $n$ = 2,000 rows. The features' singular "
        r"value ratio is about $2\delta$ (a little less: the samples are not perfectly "
        r"conditioned), so the solver keeps both mixtures while $2\delta > \varepsilon "
        r"\cdot n$, i.e. $\delta^* = \varepsilon \cdot n / 2$, about 1.2e-4. Three times "
        "above it the relative error is 0.00, three times below it 0.71. See "
        "`solutions/02_solutions.ipynb`."),
)


def _error_of_two_heads(a, b):
    return 0.0 if a != b else 0.5


def _describe(case):
    return f"(a, b) = ({case[0]:g}, {case[1]:g})"


ex3 = Exercise(
    3,
    [("best_error(a, b)", function(
        _error_of_two_heads,
        [(0.9, 0.1), (0.6, 0.3), (0.25, 0.75), (0.2, 0.5), (1.0, 0.0), (0.64, 0.27),
         (0.3, 0.3), (0.7, 0.7), (0.5, 0.5)],
        result_checker=lambda expected: number(expected, atol=0.05),  # estimates too
        describe=_describe))],
    hints=[
        "Write the mixing matrix $A = [[a, 1 - a], [b, 1 - b]]$ and compute its "
        "determinant.",
        r"$\det A = a - b$. The best relative squared error is $1 - "
        r"\operatorname{rank}(A)/2$: what is the rank when $a$ differs from $b$, and "
        "when $a$ equals $b$? Your function may compute it (`tasks.theory_error`, or "
        "least squares) or state it.",
    ],
    solution=(
        r"$\det A = a(1 - b) - b(1 - a) = a - b$. If $a \ne b$, $A$ is invertible, rank "
        "2, and the error is $1 - 2/2 = 0$: the readout $A^{-1}$ recovers both values. "
        "If $a = b$ the rows are equal, rank 1, and the error is $1 - 1/2 = 1/2$. So "
        r"`best_error(a, b)` is 0 for $a \ne b$ and 0.5 for $a = b$. See "
        "`solutions/02_solutions.ipynb`."),
    open_part="the proof",
)
