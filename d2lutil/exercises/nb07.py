"""The exercises of notebook 07, "Sharing Keys and Values", with their checks.

``ex1``: the error floors of eight query heads (``num_hiddens`` 16) with 1, 2, 4 and 8
key/value heads; ``ex2``: a prefill against one-token steps (more or fewer FLOPs, how many;
why is open-ended); ``ex3``: sequences of 4,096 tokens whose caches fit in 40 GiB for a
Llama 2 7B-shaped model with 32, 8 and 1 key/value heads.
The worked solutions are ``notebooks/solutions/07_solutions.ipynb``.

Points, on the chapter's scale: 1 for a look-up (a value read off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; several parts of one exercise may share its worth.
"""

from . import Exercise, integer, numbers_close, word

__all__ = ["ex1", "ex2", "ex3"]

ex1 = Exercise(
    1,
    [("error floors for 1, 2, 4 and 8 key/value heads", numbers_close(
        [0.75, 0.5, 0.0, 0.0], atol=0.02, keys=[1, 2, 4, 8], mistakes=[
            ([4, 8, 16, 16], "those are the ranks R; the floor is the share of the 16 target "
                             "numbers left over, 1 - R/16"),
            ([0.25, 0.5, 1, 1], "that is the share the readout recovers; the floor is the "
                                "share left over"),
            ([0.5, 0, 0, 0], "those are the floors for four heads of width 4; here each "
                             "head is only p = 2 wide"),
            ([0, 0, 0, 0], "the bound caps each group at two different mixtures and each "
                           "value head at p of a value's dimensions")]))],
    hints=[
        "With `num_hiddens` 16 and $h = 8$, each head is $p = 2$ wide; the values are "
        "$d_x = 8$ wide and an output needs $2 d_x = 16$ numbers. The notebook's bound "
        r"sums, over the $g$ groups, $\operatorname{rank}(A_\ell) \cdot "
        r"\operatorname{rank}(W_v^{(\ell)})$.",
        "Go group by group. A group's heads make at most as many different mixtures of "
        "the two positions as it has heads, and never more than 2 ($A_\\ell$ has two columns); "
        "its value head passes at most $p$ of a value's $d_x$ dimensions. Multiply, add over "
        "the groups, and the floor is the share of the $2 d_x$ target numbers left over. To "
        "check a floor, draw random softmax weights per head and a random value "
        "projection per key/value head, build the heads' outputs and fit "
        "`tasks.fit_readout` on a few thousand samples.",
    ],
    solution=(
        r"$p = 16/8 = 2$, so $R = g \cdot \min(8/g, 2) \cdot 2$ = 4, 8, 16, 16 for "
        "$g$ = 1, 2, 4, 8, and the floors $1 - R/16$ are 0.75, 0.5, 0 and 0. Two key/value "
        "heads are not enough: they hand on two 2-dimensional projections, 4 of a value's "
        "8 dimensions, each mixed two ways. Four groups of two heads mix 2-dimensional "
        r"projections two ways each ($4 \cdot 2 \cdot 2 = 16$); eight groups of one head "
        r"mix theirs one way each ($8 \cdot 1 \cdot 2 = 16$): what must reach $2 d_x$ is the "
        "sum over the groups. Least squares on fixed random weights lands within 0.02 of "
        "every floor. See `solutions/07_solutions.ipynb`."),
    points=2,  # a derivation: the rank bound, group by group, for four sharings
)

ex2 = Exercise(
    2,
    [("more or fewer FLOPs in the prefill", word(
        "more", ["more", "fewer", "same"], mistakes=[
            ("fewer", "count both with FlopCounterMode: one big call is not always cheaper"),
            ("same", "the projections cost the same, but compare the scores each computes")])),
     ("how many more or fewer (for the whole batch)", integer(
         2 * 4 * 64 * (24 * 24 - 24 * 25 // 2), what="count of FLOPs", mistakes=[
             (4 * 64 * (24 * 24 - 24 * 25 // 2),
              "that is half the count: either it is for one sequence (the small decode "
              "has a batch of 2), or it counts the extra scores of the batch but not the "
              "extra mixing (each masked score is also multiplied with a value)"),
             (2 * 64 * (24 * 24 - 24 * 25 // 2),
              "that counts only the extra scores, and for one sequence: the extra mixing "
              "costs as much again, and the small decode has a batch of 2"),
             (2 * 4 * 8 * (24 * 24 - 24 * 25 // 2),
              "that is for one head of width p; the scores and mixing of all h heads "
              "cost 4d per query-key pair")]))],
    hints=[
        "Run the prefill and the 24 one-token steps under `FlopCounterMode` (each into "
        "its own empty `KVCache`) and compare `get_total_flops()`.",
        r"Both project the same 24 tokens. The prefill computes every score of a "
        r"$24 \times 24$ matrix and masks the upper triangle afterwards; step $t$ computes "
        "only $t$ scores.",
    ],
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
    # more or fewer: read off FlopCounterMode (1); how many: a computation (2)
    points=[1, 2],
    rubric=[
        (2, "explains the difference: the prefill computes all 24 x 24 scores per "
            "sequence and masks the upper triangle, the steps only the 1 + 2 + ... + 24 "
            "they need, and scores and mixing cost 4d per query-key pair"),
        (1, "says why decoders prefill in one call all the same: a few large products "
            "instead of 24 rounds of small ones, and fused causal kernels skip most "
            "masked scores"),
    ],
)

ex3 = Exercise(
    3,
    [("sequences that fit with 32, 8 and 1 key/value heads", numbers_close(
        [20, 80, 640], keys=[32, 8, 1], mistakes=[
            ([10, 40, 320], "16-bit numbers take 2 bytes each, not 4"),
            ([40, 160, 1280], "the cache holds keys and values: two tensors per layer"),
            ([18, 74, 596], "40 GiB is 40 * 2**30 bytes, not 40e9"),
            ([640, 80, 20], "the wrong way round: fewer key/value heads leave room for more "
                            "sequences")]))],
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
)
