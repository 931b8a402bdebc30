"""The exercises of notebook 07, "Sharing Keys and Values", with their checks.

``ex1``: the error floors of h query heads (the book's: eight, ``num_hiddens`` 16) with
each number of key/value heads (1, 2, 4 and 8); ``ex2``: a prefill against one-token steps
(more or fewer FLOPs, how many; why is open-ended); ``ex3``: sequences (of 4,096 tokens)
whose caches fit in a budget (40 GiB) for a Llama 2 7B-shaped model with several numbers
of key/value heads (32, 8 and 1).
The worked solutions are ``notebooks/solutions/07_solutions.ipynb``.

Variants (issue 35): ``ex1`` (the heads' shape and the values' width), ``ex2`` (the prompt,
the model width and the batch) and ``ex3`` (the budget, the length and the key/value heads)
take a student's values (``variants``, the book's first); each answer is a formula of them.

Points, on the chapter's scale: 1 for a look-up (a value read off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; several parts of one exercise may share its worth.
"""

from . import Exercise, distinct, integer, numbers_close, word

__all__ = ["ex1", "ex2", "ex3"]


def _floors(h, num_hiddens, d_x, g, width=None):
    """The error floor 1 - R/(2 d_x) for each number of key/value heads in ``g``, R the
    notebook's rank bound (heads ``width`` wide, num_hiddens / h unless given)."""
    p = num_hiddens // h if width is None else width
    return [max(0.0, 1 - k * min(h // k, 2) * min(p, d_x) / (2 * d_x)) for k in g]


# Exercise 1's variants: h query heads of width p = num_hiddens / h on values d_x wide, and
# the numbers g of key/value heads (the divisors of h).
_EX1_VARIANTS = [
    {"h": 8, "num_hiddens": 16, "d_x": 8, "g": [1, 2, 4, 8]},  # the book's
    {"h": 6, "num_hiddens": 12, "d_x": 6, "g": [1, 2, 3, 6]},
    {"h": 8, "num_hiddens": 24, "d_x": 8, "g": [1, 2, 4, 8]},
    {"h": 8, "num_hiddens": 8, "d_x": 8, "g": [1, 2, 4, 8]},
    {"h": 12, "num_hiddens": 24, "d_x": 8, "g": [1, 2, 3, 4, 6, 12]},
    {"h": 4, "num_hiddens": 8, "d_x": 4, "g": [1, 2, 4]},
    {"h": 6, "num_hiddens": 18, "d_x": 9, "g": [1, 2, 3, 6]},
    {"h": 10, "num_hiddens": 20, "d_x": 10, "g": [1, 2, 5, 10]},
    {"h": 12, "num_hiddens": 12, "d_x": 6, "g": [1, 2, 3, 4, 6, 12]},
    {"h": 8, "num_hiddens": 32, "d_x": 8, "g": [1, 2, 4, 8]},
]


def _ex1_parts(h, num_hiddens, d_x, g):
    p = num_hiddens // h
    floors = _floors(h, num_hiddens, d_x, g)
    ranks = [min(k * min(h // k, 2) * min(p, d_x), 2 * d_x) for k in g]
    mistakes = []
    if len(g) == len(_EX1_VARIANTS[0]["g"]):  # the book's floors, in g's order
        mistakes.append((_floors(**_EX1_VARIANTS[0]),
                         "those are the floors for the book's values (h = 8, num_hiddens "
                         "16, d_x = 8); ex1.values() shows yours"))
    mistakes += [
        (ranks, "those are the ranks R; the floor is the share of the numbers an output "
                "needs that is left over"),
        ([1 - f for f in floors], "that is the share the readout recovers; the floor is "
                                  "the share left over"),
        (_floors(h, num_hiddens, d_x, g, width=2 * p),
         f"those are the floors for heads of width {2 * p}; here each head is only "
         f"p = {p} wide"),
        ([max(0.0, 1 - h * min(p, d_x) / (2 * d_x))] * len(g),
         "the bound caps each group at two different mixtures and each value head at p of "
         "a value's dimensions"),
    ]
    # 0.01: the floors are exact fractions, at least 1/20 apart; least squares on a few
    # thousand samples, as the text checks them, lands within 0.01 of each
    return [("error floors for each number of key/value heads", numbers_close(
        floors, atol=0.01, keys=list(g), mistakes=distinct(floors, mistakes, atol=1e-9)))]


def _ex1_hints(h, num_hiddens, d_x, g):
    return [
        f"With `num_hiddens` {num_hiddens} and $h = {h}$, each head is "
        f"$p = {num_hiddens // h}$ wide; the values are $d_x = {d_x}$ wide and an output "
        f"needs $2 d_x = {2 * d_x}$ numbers. The notebook's bound "
        r"sums, over the $g$ groups, $\operatorname{rank}(A_\ell) \cdot "
        r"\operatorname{rank}(W_v^{(\ell)})$.",
        "Go group by group. A group's heads make at most as many different mixtures of "
        "the two positions as it has heads, and never more than 2 ($A_\\ell$ has two columns); "
        "its value head passes at most $p$ of a value's $d_x$ dimensions. Multiply, add over "
        "the groups, and the floor is the share of the $2 d_x$ target numbers left over. To "
        "check a floor, draw random softmax weights per head and a random value "
        "projection per key/value head, build the heads' outputs and fit "
        "`tasks.fit_readout` on a few thousand samples.",
    ]


ex1 = Exercise(
    1,
    _ex1_parts,
    answers=("error_floors",),
    hints=_ex1_hints,
    solution=(
        r"$p = 16/8 = 2$, so $R = g \cdot \min(8/g, 2) \cdot 2$ = 4, 8, 16, 16 for "
        "$g$ = 1, 2, 4, 8, and the floors $1 - R/16$ are 0.75, 0.5, 0 and 0. Two key/value "
        "heads are not enough: they hand on two 2-dimensional projections, 4 of a value's "
        "8 dimensions, each mixed two ways. Four groups of two heads mix 2-dimensional "
        r"projections two ways each ($4 \cdot 2 \cdot 2 = 16$); eight groups of one head "
        r"mix theirs one way each ($8 \cdot 1 \cdot 2 = 16$): what must reach $2 d_x$ is the "
        "sum over the groups. Least squares on fixed random weights lands within 0.01 of "
        "every floor. See `solutions/07_solutions.ipynb`."),
    points=2,  # a derivation: the rank bound, group by group, for four sharings
    variants=_EX1_VARIANTS,
)

_NUM_HEADS = 8  # the small decode's layer: 8 query heads (2 key/value heads)

# Exercise 2's variants: the prompt (of the small decode's 32 tokens), the model width d
# (a multiple of 8 heads) and the batch.
_EX2_VARIANTS = [
    {"prompt": 24, "num_hiddens": 64, "batch_size": 2},  # the book's
    {"prompt": 16, "num_hiddens": 64, "batch_size": 2},
    {"prompt": 20, "num_hiddens": 32, "batch_size": 3},
    {"prompt": 28, "num_hiddens": 48, "batch_size": 2},
    {"prompt": 12, "num_hiddens": 128, "batch_size": 3},
    {"prompt": 10, "num_hiddens": 64, "batch_size": 2},
    {"prompt": 30, "num_hiddens": 32, "batch_size": 2},
    {"prompt": 18, "num_hiddens": 96, "batch_size": 3},
    {"prompt": 22, "num_hiddens": 64, "batch_size": 3},
    {"prompt": 26, "num_hiddens": 16, "batch_size": 2},
]


def _extra(prompt, num_hiddens, batch_size):
    """The masked scores of the prefill: P^2 computed against 1 + 2 + ... + P, at 4d FLOPs
    per query-key pair (scores and mixing over all heads), for each sequence."""
    return batch_size * 4 * num_hiddens * (prompt * prompt - prompt * (prompt + 1) // 2)


def _ex2_parts(prompt, num_hiddens, batch_size):
    extra = _extra(prompt, num_hiddens, batch_size)
    half = ("the extra scores of the batch but not the extra mixing (each masked score is "
            "also multiplied with a value)")
    one_sequence = f"one sequence (the small decode has a batch of {batch_size})"
    if batch_size == 2:
        halves = [(extra // 2, f"that is half the count: either it is for {one_sequence}, "
                               f"or it counts {half}")]
    else:
        halves = [(extra // batch_size, f"that is for {one_sequence}"),
                  (extra // 2, f"that counts {half}")]
    mistakes = [
        *halves,
        (extra // (2 * batch_size),
         "that counts only the extra scores, and for one sequence: the extra mixing "
         f"costs as much again, and the small decode has a batch of {batch_size}"),
        (extra // _NUM_HEADS,
         "that is for one head of width p; the scores and mixing of all h heads "
         "cost 4d per query-key pair"),
    ]
    if (prompt, num_hiddens, batch_size) != tuple(_EX2_VARIANTS[0].values()):
        mistakes.insert(0, (_extra(**_EX2_VARIANTS[0]), "that is the count for the book's "
                            "prompt, width and batch; ex2.values() shows yours"))
    seen, kept = {extra}, []
    for value, message in mistakes:
        if value not in seen:
            seen.add(value)
            kept.append((value, message))
    return [
        ("more or fewer FLOPs in the prefill", word(
            "more", ["more", "fewer", "same"], mistakes=[
                ("fewer", "count both with FlopCounterMode: one big call is not always "
                          "cheaper"),
                ("same", "the projections cost the same, but compare the scores each "
                         "computes")])),
        ("how many more or fewer (for the whole batch)", integer(
            extra, what="count of FLOPs", mistakes=kept))]


def _ex2_hints(prompt, num_hiddens, batch_size):
    setup = "" if (prompt, num_hiddens, batch_size) == tuple(
        _EX2_VARIANTS[0].values()) else (
        f" Build the small decode with your sizes first: the layer with `num_hiddens` = "
        f"{num_hiddens} (8 heads, 2 key/value heads) and `X` of {batch_size} sequences of "
        "32 tokens.")
    return [
        f"Run the prefill and the {prompt} one-token steps under `FlopCounterMode` (each "
        "into its own empty `KVCache`) and compare `get_total_flops()`." + setup,
        rf"Both project the same {prompt} tokens. The prefill computes every score of a "
        rf"${prompt} \times {prompt}$ matrix and masks the upper triangle afterwards; step "
        "$t$ computes only $t$ scores.",
    ]


ex2 = Exercise(
    2,
    _ex2_parts,
    answers=("prefill_more", "prefill_extra"),
    hints=_ex2_hints,
    solution=(
        "The prefill counts more: 1,277,952 FLOPs against 1,136,640 for 24 one-token "
        r"steps, 141,312 more. The projections are the same, but the prefill computes all "
        r"$24 \times 24 = 576$ scores per sequence and masks the upper triangle, while the "
        r"steps compute only $1 + 2 + \dots + 24 = 300$; scores and mixing cost $4d$ per "
        r"query-key pair, so the difference is $b \cdot 4d \cdot (576 - 300)$. Decoders "
        "still prefill in one call: a few large products instead of 24 rounds of small "
        "ones, and a fused causal kernel skips most masked scores. See "
        "`solutions/07_solutions.ipynb`."),
    open_part="why the prefill differs",
    # more or fewer: a choice, worth nothing on its own (issue 45), and "more" for every
    # variant; how many rests on it (a positive count is "more") and carries its point
    # with its own computation (2)
    points=[0, 3],
    rubric=[
        (2, "explains the difference: the prefill computes all 24 x 24 scores per "
            "sequence and masks the upper triangle, the steps only the 1 + 2 + ... + 24 "
            "they need, and scores and mixing cost 4d per query-key pair"),
        (1, "says why decoders prefill in one call all the same: a few large products "
            "instead of 24 rounds of small ones, and fused causal kernels skip most "
            "masked scores"),
    ],
    variants=_EX2_VARIANTS,
    open_book={0: "\"more\" for every prompt of two tokens or more: a prefill computes the "
                  "masked scores that one-token steps never compute, whatever the sizes"},
)

_LAYERS, _HEAD_WIDTH, _BYTES = 32, 128, 2  # Llama 2 7B's shape, 16-bit numbers

# Exercise 3's variants: the budget in GiB, the tokens per sequence and the numbers of
# key/value heads (divisors of the 32 query heads).
_EX3_VARIANTS = [
    {"gib": 40, "tokens": 4096, "g": [32, 8, 1]},  # the book's
    {"gib": 24, "tokens": 2048, "g": [32, 4, 1]},
    {"gib": 60, "tokens": 8192, "g": [32, 8, 2]},
    {"gib": 40, "tokens": 3072, "g": [32, 8, 1]},
    {"gib": 30, "tokens": 6144, "g": [32, 4, 1]},
    {"gib": 48, "tokens": 4096, "g": [32, 16, 4]},
    {"gib": 18, "tokens": 1024, "g": [32, 8, 1]},
    {"gib": 80, "tokens": 16384, "g": [32, 8, 1]},
    {"gib": 20, "tokens": 2048, "g": [32, 2, 1]},
    {"gib": 36, "tokens": 3072, "g": [32, 8, 4]},
]


def _sequences(budget, tokens, g, factor=1):
    """Whole sequences whose caches fit in ``budget`` bytes (``factor``: a slip's bytes
    per sequence relative to the right ones)."""
    per_sequence = [2 * _LAYERS * k * _HEAD_WIDTH * tokens * _BYTES * factor for k in g]
    return [int(budget // s) for s in per_sequence]


def _ex3_parts(gib, tokens, g):
    budget = gib * 2**30
    fits = _sequences(budget, tokens, g)
    mistakes = []
    if (gib, tokens, g) != tuple(_EX3_VARIANTS[0].values()):
        book = _EX3_VARIANTS[0]
        mistakes.append((_sequences(book["gib"] * 2**30, book["tokens"], book["g"]),
                         "those are the counts for the book's values (40 GiB, 4,096 tokens, "
                         "32, 8 and 1 key/value heads); ex3.values() shows yours"))
    mistakes += [
        (_sequences(budget, tokens, g, factor=2), "16-bit numbers take 2 bytes each, not 4"),
        (_sequences(budget, tokens, g, factor=0.5),
         "the cache holds keys and values: two tensors per layer"),
        (_sequences(gib * 10**9, tokens, g),
         f"{gib} GiB is {gib} * 2**30 bytes, not {gib}e9"),
        (fits[::-1], "the wrong way round: fewer key/value heads leave room for more "
                     "sequences"),
    ]
    shares = [budget / (2 * _LAYERS * k * _HEAD_WIDTH * tokens * _BYTES) for k in g]
    for near in (shares, [round(x) for x in shares]):  # not whole, or rounded up
        mistakes.append((near, "a sequence's cache fits whole or not at all: count the "
                               "whole sequences"))
    return [("sequences that fit for each number of key/value heads", numbers_close(
        fits, keys=list(g), mistakes=distinct(fits, mistakes, atol=1e-9)))]


ex3 = Exercise(
    3,
    _ex3_parts,
    answers=("sequences_fit",),
    hints=[
        "Llama 2 7B has 32 layers and heads of width 128. Per layer, the cache holds keys "
        r"and values: $2 \cdot g \cdot 128$ numbers per token, 2 bytes each.",
        "First the bytes of one sequence's cache: the numbers one layer keeps per token "
        "(keys and values, $g$ heads of width 128 each), times the tokens, the layers and "
        "the bytes per number. Then count the whole sequences that fit in the budget; a "
        "GiB is $2^{30}$ bytes.",
    ],
    solution=(
        r"One sequence needs $2 \cdot 32 \cdot g \cdot 128 \cdot 4096 \cdot 2$ bytes (keys "
        "and values, layers, key/value heads, head width, tokens, bytes per number): "
        "2 GiB for $g = 32$, 512 MiB for $g = 8$, 64 MiB for $g = 1$. So 40 GiB hold 20, "
        "80 and 640 sequences: the batch at full length grows by $h/g$. See "
        "`solutions/07_solutions.ipynb`."),
    points=2,  # a computation: the bytes of one sequence's cache, then the budget
    variants=_EX3_VARIANTS,
)
