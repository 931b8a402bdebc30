"""The exercises of notebook 02, "Two Heads Suffice", with their checks.

``ex1``: four heads over three positions (the best error);
``ex2``: undo the soft pair of heads: the values behind their outputs, and the readout's
weight on head 2 for ``v_1``;
``ex3``: any two different heads solve ``k = 2`` (a function of ``a`` and ``b``; the proof
is open-ended). The worked solutions are ``notebooks/solutions/02_solutions.ipynb``.

Points follow the chapter's scale: 1 for a look-up (read a value off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; the comment beside each ``points=`` says which rule gives each part its points.
The open part (the proof) has a rubric, marked by hand.
"""

import math

import numpy as np

from . import Exercise, function, number, numbers_close

__all__ = ["ex1", "ex2", "ex3"]

TOL = 0.005  # a least-squares estimate on some 10,000 samples lands this close

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
    points=2,  # a derivation (the rank of the weights, then 1 - rank/k), 2
)

A_SOFT = np.array([[0.88, 0.12], [0.12, 0.88]])  # the lesson's soft pair of heads
OUTPUTS = np.array([1.64, -0.64])  # what the two heads hand on at one coordinate
_READOUT = np.linalg.inv(A_SOFT)  # v = A^-1 y

ex2 = Exercise(
    2,
    [("values (v_1, v_2) behind the outputs", numbers_close(
        _READOUT @ OUTPUTS, atol=1e-4, mistakes=[
            (OUTPUTS, "those are the heads' outputs, each still a mixture: undo the "
                      "mixing"),
            (A_SOFT @ OUTPUTS, "that mixes the outputs once more; the readout undoes the "
                               "mixing matrix"),
            ((_READOUT @ OUTPUTS)[::-1], "the values come in the order of the "
                                         "positions, v_1 first")])),
     ("weight of head 2's output in the readout of v_1", number(
         _READOUT[0, 1], atol=1e-4, mistakes=[
             (0.12, "that is an entry of the mixing matrix, a head's weight on a position; "
                    "the readout is its inverse"),
             (-0.12, "close: the inverse of a 2 x 2 matrix also divides by its "
                     "determinant"),
             (_READOUT[0, 0], "that is the weight of head 1's output"),
             (0.0, "head 2 also hands on some of v_1; the readout must take it "
                   "back out")]))],
    hints=[
        r"At each coordinate the heads hand on $\mathbf{y} = \mathbf{A}\mathbf{v}$ with "
        r"$\mathbf{A} = [[0.88, 0.12], [0.12, 0.88]]$. Solve for $\mathbf{v}$ "
        "(`torch.linalg.solve`).",
        r"The readout is $\mathbf{A}^{-1}$: for a $2 \times 2$ matrix, swap the "
        r"diagonal, negate the other two entries and divide by $\det \mathbf{A} = "
        r"0.88 - 0.12$. Head 2's output enters $v_1$ through entry (1, 2) of "
        r"$\mathbf{A}^{-1}$; `tasks.fit_readout` on one coordinate ($d = 1$) finds its "
        "transpose.",
    ],
    solution=(
        r"$\det \mathbf{A} = 0.88 - 0.12 = 0.76$ and $\mathbf{A}^{-1} = [[0.88, -0.12], "
        r"[-0.12, 0.88]] / 0.76$, so $\mathbf{v} = \mathbf{A}^{-1}\mathbf{y} = (2, -1)$: "
        r"indeed $0.88 \cdot 2 - 0.12 = 1.64$ and $0.24 - 0.88 = -0.64$. The readout of "
        "$v_1$ takes head 1's output with weight $0.88/0.76 = 1.158$ and head 2's with "
        "$-0.12/0.76 = -0.158$: it subtracts the share of $v_1$ that head 2 carries "
        "besides $v_2$. Neither head needs to be sharp, only different. Least squares "
        r"on one coordinate finds the same weights, $(\mathbf{A}^{-1})^\top$, as in the "
        "notebook's readout. See `solutions/02_solutions.ipynb`."),
    points=[2, 1],  # the values, a computation (invert A and apply it), 2; the
    # weight, read off the inverse computed for them (a look-up), 1
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
    points=2,  # the result as a function, a derivation (det A = a - b, then the rank
    # law), 2; the proof is marked by its rubric (a proof, 3)
    rubric=[
        (2, r"Computes $\det \mathbf{A} = a - b$ and concludes that $\mathbf{A}$ has rank "
            r"2 exactly when $a \ne b$, and rank 1 (equal rows) when $a = b$."),
        (1, r"Applies $1 - \operatorname{rank}(\mathbf{A})/2$: error 0 for $a \ne b$ "
            r"(the readout $\mathbf{A}^{-1}$ recovers both values), 1/2 for $a = b$."),
    ],
)
