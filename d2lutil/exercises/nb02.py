"""The exercises of notebook 02, "Two Heads Suffice", with their checks.

``ex1``: four heads over a few positions (the best error);
``ex2``: undo a soft pair of heads: the values behind their outputs, and the readout's
weight on head 2 for ``v_1``;
``ex3``: any two different heads solve ``k = 2`` (a function of ``a`` and ``b``; the proof
is open-ended). The worked solutions are ``notebooks/solutions/02_solutions.ipynb``.

Exercises 1 and 2 have variants (issue 35): the book's values first (the four rows of
weights; the soft pair (0.88, 0.12) and the outputs ``y``), then the values a student's id
may pick, each part built from them by formula. Exercise 3's rule is the lesson itself: it
is open-book, and grading adds hidden pairs (a, b).

Points follow the chapter's scale: 1 for a look-up (read a value off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; the comment beside each ``points=`` says which rule gives each part its points.
The open part (the proof) has a rubric, marked by hand.
"""

import math

import numpy as np

from . import Exercise, distinct, function, number, numbers_close

__all__ = ["ex1", "ex2", "ex3"]

TOL = 0.005  # a least-squares estimate on some 10,000 samples lands this close


# --- exercise 1: four heads over k positions ----------------------------------------------------

def _ex1_parts(weights):
    heads, k = len(weights), len(weights[0])
    rank = int(np.linalg.matrix_rank(np.array(weights, dtype=float)))
    error = 1 - rank / k
    return [("best relative squared error", number(
        error, atol=TOL, mistakes=distinct(error, [
            (0.0, "what matters is not how many heads there are but how many independent "
                  "directions their weights span"),
            (1 - 1 / k, "that is what one head leaves; how many independent rows do these "
                        "four weights have?"),
            (1 / heads, "the error does not fall with the number of heads but with the "
                        "rank of their weights"),
            (math.sqrt(error), "this looks like the relative error, a square root; the "
                               "exercise asks for the relative squared error"),
            (max(0.0, 1 - heads / k), "each row adds a direction only if it is no mixture "
                                      "of the others"),
            (rank / k, "that is the share the readout recovers, not the share it "
                       "loses")], atol=2 * TOL)))]


def _ex1_hints(weights):
    k = len(weights[0])
    return [
        r"The best linear readout leaves $1 - \operatorname{rank}(A)/k$. Which positions "
        "do the four rows of weights ever look at?",
        "A position that no row looks at is a column of zeros, and a row that mixes other "
        "rows adds no direction. Compute `torch.linalg.matrix_rank` of the "
        rf"$4 \times {k}$ matrix, then measure with `tasks.readout_errors(A, "
        "value_size=8, num_train=10_000, num_test=40_000)`.",
    ]


ex1 = Exercise(
    1,
    _ex1_parts,
    answers=("error_four_heads",),
    hints=_ex1_hints,
    solution=(
        "All four rows lie in the plane of the first two unit vectors, so "
        r"$\operatorname{rank}(A) = 2$ and the best relative squared error is $1 - 2/3 = "
        "1/3$: position 3 is never looked at, however many heads there are. Least "
        "squares measures 0.334. See `solutions/02_solutions.ipynb`."),
    # no points: tasks.theory_error(weights) returns the answer (1 - rank/k), and the
    # lesson's k x h table prints several variants' answers; practice for exercise 2
    # (tests/exercises/test_exercises_understanding.py)
    points=0,
    # four rows summing to 1 in each variant; rank 2 of 3 in the book's (1/3), then
    # rank 2 of 4 (1/2), 3 of 4 (1/4), 3 of 5 (2/5) and 2 of 5 (3/5)
    variants=[
        {"weights": [[1, 0, 0], [0, 1, 0], [0.5, 0.5, 0], [0.2, 0.8, 0]]},
        {"weights": [[1, 0, 0, 0], [0, 1, 0, 0], [0.5, 0.5, 0, 0], [0.25, 0.75, 0, 0]]},
        {"weights": [[1, 0, 0, 0], [0, 0, 1, 0], [0.5, 0, 0.5, 0], [0, 0.5, 0.5, 0]]},
        {"weights": [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0],
                     [0.5, 0.25, 0.25, 0, 0]]},
        {"weights": [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0.5, 0, 0.5, 0, 0],
                     [0.2, 0, 0.8, 0, 0]]},
    ],
)


# --- exercise 2: undo a soft pair of heads -----------------------------------------------------

def _ex2_parts(weights, y):
    mixing = np.array(weights, dtype=float)  # row i: head i's weights on (v_1, v_2)
    outputs = np.array(y, dtype=float)
    readout = np.linalg.inv(mixing)  # v = A^-1 y
    values = readout @ outputs
    weight, head_1 = float(readout[0, 1]), float(readout[0, 0])
    entry = float(mixing[0, 1])
    return [
        ("values (v_1, v_2) behind the outputs", numbers_close(
            values, atol=1e-4, mistakes=distinct(values, [
                (outputs, "those are the heads' outputs, each still a mixture: undo the "
                          "mixing"),
                (mixing @ outputs, "that mixes the outputs once more; the readout undoes "
                                   "the mixing matrix"),
                (values[::-1], "the values come in the order of the positions, v_1 "
                               "first")], atol=2e-4))),
        ("weight of head 2's output in the readout of v_1", number(
            weight, atol=1e-4, mistakes=distinct(weight, [
                (entry, "that is an entry of the mixing matrix, a head's weight on a "
                        "position; the readout is its inverse"),
                (-entry, "close: the inverse of a 2 x 2 matrix also divides by its "
                         "determinant"),
                (head_1, "that is the weight of head 1's output"),
                (0.0, "head 2 also hands on some of v_1; the readout must take it "
                      "back out")], atol=2e-4)))]


def _ex2_hints(weights, y):
    (a, b), (c, d) = weights
    matrix = f"[[{a:g}, {b:g}], [{c:g}, {d:g}]]"
    return [
        r"At each coordinate the heads hand on $\mathbf{y} = \mathbf{A}\mathbf{v}$ with "
        rf"$\mathbf{{A}} = {matrix}$. Solve for $\mathbf{{v}}$ (`torch.linalg.solve`).",
        r"The readout is $\mathbf{A}^{-1}$: for a $2 \times 2$ matrix, swap the "
        r"diagonal, negate the other two entries and divide by $\det \mathbf{A} = "
        rf"{a:g} \cdot {d:g} - {b:g} \cdot {c:g}$. Head 2's output enters $v_1$ through entry "
        r"(1, 2) of $\mathbf{A}^{-1}$; `tasks.fit_readout` on one coordinate ($d = 1$) "
        "finds its transpose.",
    ]


ex2 = Exercise(
    2,
    _ex2_parts,
    answers=("values_behind", "head_2_weight"),
    hints=_ex2_hints,
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
    # y = A v for whole values v: (2, -1) in the book's, then (3, -1), (1, -2), (-1, 3),
    # (4, 1), (1, 3), (-2, 1), (3, 2), (-1, -3), (2, -3) and (5, -1); the soft pair
    # differs in every variant, so does the readout's weight
    variants=[
        {"weights": [[0.88, 0.12], [0.12, 0.88]], "y": [1.64, -0.64]},
        {"weights": [[0.8, 0.2], [0.2, 0.8]], "y": [2.2, -0.2]},
        {"weights": [[0.9, 0.1], [0.1, 0.9]], "y": [0.7, -1.7]},
        {"weights": [[0.75, 0.25], [0.25, 0.75]], "y": [0.0, 2.0]},
        {"weights": [[0.7, 0.3], [0.3, 0.7]], "y": [3.1, 1.9]},
        {"weights": [[0.85, 0.15], [0.15, 0.85]], "y": [1.3, 2.7]},
        {"weights": [[0.95, 0.05], [0.05, 0.95]], "y": [-1.85, 0.85]},
        {"weights": [[0.65, 0.35], [0.35, 0.65]], "y": [2.65, 2.35]},
        {"weights": [[0.68, 0.32], [0.32, 0.68]], "y": [-1.64, -2.36]},
        {"weights": [[0.82, 0.18], [0.18, 0.82]], "y": [1.1, -2.1]},
        {"weights": [[0.92, 0.08], [0.08, 0.92]], "y": [4.52, -0.52]},
    ],
)


# --- exercise 3: two different heads suffice -------------------------------------------------

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
        describe=_describe,
        hidden=[(0.15, 0.85), (0.45, 0.4), (0.95, 0.05), (0.0, 1.0), (0.35, 0.6),
                (0.1, 0.1), (0.85, 0.85), (0.0, 0.0)]))],
    answers=("best_error",),
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
    open_book={0: "the rule, 0 for a != b and 1/2 for a = b, is the lesson's proposition; "
                  "grading also judges hidden pairs (a, b)"},
)
