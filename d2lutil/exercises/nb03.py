"""The exercises of notebook 03, "Multi-Head Attention, Built Step by Step", with checks.

``ex1``: parameters with biases at d = 256 (the book's; a student's id picks another d),
and whether they depend on h;
``ex2``: the FLOPs of cross-attention as a function ``(n, m, d, h)``;
``ex3``: the batches for which ``repeat`` agrees with ``repeat_interleave``, as a function
of the batch's size, the heads and the number of different lengths (why a test with such
a batch misses the bug is open-ended, with a rubric).
The worked solutions are ``notebooks/solutions/03_solutions.ipynb``.

Exercise 1's count has variants (issue 35): ``d`` is the book's 256, or the one a
student's id picks, and the count is built from it. Exercises 2 and 3 ask for the lesson's
rule as a function: they are open-book, and grading adds hidden cases.

Points follow the chapter's scale: 1 for a look-up (read a value off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; the comment beside each ``points=`` says which rule gives each part its points.
"""

import itertools

import torch

from . import Exercise, function, integer, number, truth

__all__ = ["ex1", "ex2", "ex3"]


def _ex1_parts(d):
    return [
        ("parameters with bias=True", integer(
            4 * d * d + 4 * d, what="count of parameters", mistakes=[
                (4 * d * d, "that leaves out the biases: each of the four projections gains "
                            "one"),
                (4 * d * d + d, "each of the four projections has its own bias, not only "
                                "W_o"),
                (4 * d * d + 4 * d * 8, "a bias has one entry per output feature, "
                                        "whatever h")])),
        ("does it depend on h?", truth(
            False, wrong_message="count again for two values of h: the heads only group the "
                                 "features that the four d x d projections produce"))]


def _ex1_hints(d):
    return [
        r"Each of the four projections $W_q$, $W_k$, $W_v$, $W_o$ is a $d \times d$ "
        "matrix; `bias=True` gives each a bias vector. How long is a bias?",
        r"A bias has one entry per output feature of its projection. Add the entries of "
        "the four weight matrices and the four biases, then build "
        f"`d2lutil.MultiHeadAttention({d}, h, bias=True, query_size={d}, key_size={d}, "
        f"value_size={d})` for two values of $h$ and compare its count with yours.",
    ]


ex1 = Exercise(
    1,
    _ex1_parts,
    answers=("params_with_bias", "depends_on_heads"),
    hints=_ex1_hints,
    solution=(
        "Each projection gains a bias of length $d$, so the count is $4d^2 + 4d$ = "
        "263,168 at $d = 256$, for every $h$: the heads only group the output features "
        r"of the same four $d \times d$ projections. See `solutions/03_solutions.ipynb`."),
    points=[2, 0],  # the count, a computation, 2; whether it depends on h, a yes or no
    # that rests on the count (the same for everyone), 0
    variants=[{"d": 256}, {"d": 128}, {"d": 192}, {"d": 384}, {"d": 512}, {"d": 160},
              {"d": 224}, {"d": 288}, {"d": 320}, {"d": 448}, {"d": 480}],
    open_book={1: "the count never depends on h, whatever d: the heads only group the "
                  "features of the same four projections"},
)


class _Flops(int):
    """A FLOP count that also keeps the self-attention count of its case, 8nd^2 + 4n^2d,
    so that the check can name that slip (a result checker sees the count, not the
    case)."""

    def __new__(cls, value, self_attention):
        count = super().__new__(cls, value)
        count.self_attention = self_attention
        return count


def _cross_flops(n, m, d, h):
    return _Flops(4 * (n + m) * d * d + 4 * n * m * d, 8 * n * d * d + 4 * n * n * d)


def _flops_checker(expected):
    """A plain ``number`` of the count, with the self-attention count of the same case as
    a slip (a plain int) where it differs."""
    slips = [] if expected.self_attention == expected else [
        (int(expected.self_attention), "that is the self-attention count, 8nd^2 + 4n^2d: "
                                       "here the keys and values have m rows, not n")]
    return number(int(expected), rtol=1e-9, mistakes=slips)


ex2 = Exercise(
    2,
    [("cross_attention_flops(n, m, d, h)", function(
        _cross_flops,
        [(4, 9, 64, 1), (4, 9, 64, 8), (16, 3, 32, 2), (10, 10, 48, 4), (1, 7, 16, 16),
         (5, 2, 8, 1)],
        result_checker=_flops_checker,
        describe=lambda case: "(n, m, d, h) = ({}, {}, {}, {})".format(*case),
        hidden=[(3, 5, 128, 4), (7, 1, 16, 2), (1, 1, 8, 1), (12, 20, 96, 6),
                (2, 15, 40, 5), (9, 9, 24, 3), (6, 4, 256, 8), (20, 7, 12, 12)]))],
    answers=("cross_attention_flops",),
    hints=[
        r"Count a multiply-add as 2 FLOPs: an $(a \times b)$ by $(b \times c)$ product "
        "costs $2abc$. The query and output projections act on $n$ rows, the key and "
        "value projections on $m$.",
        r"Per head of width $p = d/h$: scores are $(n \times p)$ by $(p \times m)$, "
        r"mixing $(n \times m)$ by $(m \times p)$. Add over the $h$ heads, then check "
        "against `cost.count_flops(model, queries, keys, keys).total` for a few shapes "
        "(outside your function: it must compute the count itself).",
    ],
    solution=(
        "Projections: queries and output $2nd^2$ each, keys and values $2md^2$ each, so "
        "$4(n + m)d^2$. Scores: $2nmp$ per head, $2nmd$ over $h$ heads; mixing the same. "
        "Total $4(n + m)d^2 + 4nmd$, with no $h$ in it; for $m = n$ it is $8nd^2 + 4n^2 "
        "d$. See `solutions/03_solutions.ipynb`."),
    # the function is checked, for no points: cost.attention_flops returns its answer
    # (issue 45); the derivation, written, carries the exercise's 2 points, marked by hand
    points=0,
    open_part="the written derivation",
    rubric=[(1, "counts the four projections on the right rows: 4(n + m)d^2"),
            (1, "counts scores and mixing per head and adds them over the heads: 4nmd, "
                "with no h left in the total")],
    open_book={0: "the formula 4(n + m)d^2 + 4nmd is the lesson; grading also judges "
                  "hidden shapes (n, m, d, h)"},
)


def _agree(batch_size, num_heads, num_lengths):
    """Whether repeat and repeat_interleave agree, computed on one such batch."""
    lens = torch.tensor([i % num_lengths for i in range(batch_size)])
    return torch.equal(lens.repeat(num_heads), torch.repeat_interleave(lens, num_heads))


def _batches():
    """Every batch of 1 to 4 sequences with 1 to its size of different lengths, 1 to 4
    heads."""
    return [(batch_size, num_heads, num_lengths)
            for batch_size, num_heads in itertools.product(range(1, 5), range(1, 5))
            for num_lengths in range(1, batch_size + 1)]


def _agree_checker(expected):
    return truth(expected, wrong_message=(
        "here both expansions give every row the same length: compare what each gives "
        "row i * h + j" if expected else
        "here some row of the folded batch gets another sequence's length from repeat"))


ex3 = Exercise(
    3,
    [("expansions_agree(batch_size, num_heads, num_lengths)", function(
        _agree, _batches, result_checker=_agree_checker,
        describe=lambda case: "(batch_size, num_heads, num_lengths) = ({}, {}, {})".format(
            *case),
        hidden=[(5, 1, 3), (6, 2, 1), (1, 7, 1), (6, 3, 2), (8, 2, 8), (5, 5, 5),
                (7, 6, 2), (8, 8, 1)]))],
    answers=("expansions_agree",),
    hints=[
        r"Row $i \cdot h + j$ of the folded batch is head $j$ of sequence $i$. Which "
        "length does `repeat_interleave` give it, and which does `repeat` give it?",
        r"`repeat` gives row $r$ the length of sequence $r \bmod b$. Try one sequence, "
        "one head, and a batch whose sequences all have the same length; then one with "
        "two different lengths.",
    ],
    solution=(
        r"`repeat_interleave` gives row $i \cdot h + j$ the length of sequence $i$; "
        r"`repeat` gives it the length of sequence $(i \cdot h + j) \bmod b$. They agree "
        "exactly when the batch has one sequence, or there is one head, or every "
        "sequence has the same valid length (one different length): `batch_size == 1 "
        "or num_heads == 1 or num_lengths == 1`. A test built from such a batch gets "
        "identical tensors, so every later number is identical and the bug goes unseen: "
        "a test needs several heads and sequences of different lengths, and must compare "
        "values, not shapes. See `solutions/03_solutions.ipynb`."),
    open_part="why a test with such a batch misses the bug",
    points=2,  # the rule, a derivation (written as a function), 2; the open part is
    # marked by its rubric (an explanation, 2, and what a test needs, 1)
    rubric=[
        (2, "Explains that with such a batch both expansions give the same tensor, so "
            "every later number is identical and no output can show the bug."),
        (1, "Says what a test needs instead: several heads, sequences of different "
            "lengths in one batch, and a comparison of values, not of shapes."),
    ],
    open_book={0: "the rule (one sequence, one head or one length) is the lesson; grading "
                  "also judges hidden batches of up to 8 sequences and 8 heads"},
)
