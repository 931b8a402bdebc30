"""The checks of notebook 07's exercises, against answers computed here by another route.

The right answers come from the rank of the heads' linear map and NumPy least squares
(floors), from FlopCounterMode around a real prefill and real steps (FLOPs) and from the
bytes a ``KVCache`` holds (memory), never from the constants in d2lutil.exercises.nb07.
"""

import re

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import d2lutil
from d2lutil.exercises.nb07 import ex1, ex2, ex3

NUM_HIDDENS, NUM_HEADS, VALUE_SIZE = 16, 8, 8


def heads_map(num_kv_heads, rng):
    """The linear map from [x_j; x_k] (2m numbers) to the heads' outputs (h * p numbers).

    Head i of group r puts weights (a_i, b_i) on the two positions and reads them through
    its group's p x m value projection W_r: its output is [a_i W_r, b_i W_r] [x_j; x_k].
    """
    p = NUM_HIDDENS // NUM_HEADS
    projections = rng.standard_normal((num_kv_heads, p, VALUE_SIZE))
    blocks = []
    for i in range(NUM_HEADS):
        a, b = rng.dirichlet([1, 1])
        W = projections[i * num_kv_heads // NUM_HEADS]
        blocks.append(np.hstack([a * W, b * W]))
    return np.vstack(blocks)  # (h * p, 2m)


@pytest.fixture(scope="module")
def floors():
    """Floors from the rank of the map, and measured by least squares on samples."""
    rng = np.random.default_rng(0)
    by_rank, measured = {}, {}
    for g in (1, 2, 4, 8):
        M = heads_map(g, rng)
        by_rank[g] = 1 - np.linalg.matrix_rank(M) / (2 * VALUE_SIZE)
        train, test = (rng.standard_normal((4_000, 2 * VALUE_SIZE)) for _ in range(2))
        readout, *_ = np.linalg.lstsq(train @ M.T, train, rcond=None)
        residual = test - test @ M.T @ readout
        measured[g] = float((residual ** 2).sum() / (test ** 2).sum())
    return by_rank, measured


def test_ex1_accepts_the_rank_and_the_measured_floors(floors):
    by_rank, measured = floors
    assert ex1.check(by_rank)
    assert ex1.check(measured)
    assert ex1.check([by_rank[g] for g in (1, 2, 4, 8)])
    assert ex1.check(torch.tensor([measured[g] for g in (1, 2, 4, 8)]))


@pytest.mark.parametrize("wrong", [
    [4, 8, 16, 16], [0.25, 0.5, 1, 1], [0.5, 0, 0, 0], [0, 0, 0, 0], [0.75, 0.75, 0.5, 0.5],
    [0.75, 0.5, 0.0], {1: 0.75, 2: 0.5, 4: 0.0, 16: 0.0}])
def test_ex1_refuses_typical_wrong_answers(wrong):
    assert not ex1.check(wrong)


def counted_prefill_and_steps():
    """FLOPs of the 24-token prefill and of 24 one-token steps, as notebook 7 sets them up."""
    layer = d2lutil.MultiHeadAttention(64, 8, query_size=64, key_size=64, value_size=64,
                                       num_kv_heads=2).eval()
    X = torch.randn(2, 24, 64)

    def flops(call):
        counter = FlopCounterMode(display=False)
        with torch.no_grad(), counter:
            call()
        return counter.get_total_flops()

    lens = torch.arange(1, 25).expand(2, -1)
    prefill = flops(lambda: layer(X, X, X, lens, cache=d2lutil.KVCache()))
    cache = d2lutil.KVCache()
    steps = flops(lambda: [layer(X[:, t:t + 1], X[:, t:t + 1], X[:, t:t + 1], cache=cache)
                           for t in range(24)])
    return prefill, steps


@pytest.fixture(scope="module")
def prefill_and_steps():
    return counted_prefill_and_steps()


def test_ex2_accepts_the_counted_answer(prefill_and_steps):
    prefill, steps = prefill_and_steps
    direction = "more" if prefill > steps else "fewer"
    assert ex2.check(direction, prefill - steps)
    assert ex2.check(direction.upper(), float(prefill - steps))
    assert ex2.check(f" {direction} ", np.int64(abs(prefill - steps)))


@pytest.mark.parametrize("wrong", ["direction", "per sequence", "same", "total"])
def test_ex2_refuses_typical_wrong_answers(prefill_and_steps, wrong):
    prefill, steps = prefill_and_steps
    extra = prefill - steps
    answers = {"direction": ("fewer", extra), "per sequence": ("more", extra // 2),
               "same": ("same", 0), "total": ("more", prefill)}[wrong]
    assert not ex2.check(*answers)


def test_ex2_half_the_count_names_both_slips(prefill_and_steps):
    # Half the extra FLOPs is what one sequence gives, and also what the batch gives when
    # only the scores are counted (scores and mixing cost the same per query-key pair):
    # the message must name both slips.
    prefill, steps = prefill_and_steps
    verdict = ex2.check("more", (prefill - steps) // 2)
    assert not verdict
    assert "batch" in verdict.message and "mixing" in verdict.message


@pytest.mark.parametrize("divisor, words", [(4, ("scores", "mixing", "batch")),
                                            (64 // 8, ("head",))])
def test_ex2_scores_of_one_sequence_or_one_head_get_their_own_message(prefill_and_steps,
                                                                      divisor, words):
    prefill, steps = prefill_and_steps
    verdict = ex2.check("more", (prefill - steps) // divisor)
    assert not verdict
    assert all(word in verdict.message for word in words), verdict.message


def test_the_hints_give_the_method_not_the_answer(floors, prefill_and_steps,
                                                  sequences_that_fit):
    by_rank, _ = floors
    prefill, steps = prefill_and_steps
    answers = {
        ex1: [f"{by_rank[g]:g}" for g in (1, 2)] + ["4, 8, 16, 16", "1 - R/16"],
        ex2: [str(prefill - steps), f"{prefill - steps:,}"],
        ex3: [str(n) for n in sequences_that_fit.values()] + ["4096 * 2"],
    }
    for exercise, texts in answers.items():
        for hint in exercise.hints:
            for text in texts:
                assert not re.search(rf"(?<![\d.]){re.escape(text)}(?![\d.])", hint), (
                    f"{exercise.name}: a hint gives away {text!r}")


@pytest.fixture(scope="module")
def sequences_that_fit():
    """From the bytes a KVCache holds for 16 tokens of one layer, in 16-bit numbers."""
    fits = {}
    for g in (32, 8, 1):
        cache = d2lutil.KVCache()
        cache.append(torch.zeros(1, g, 16, 128, dtype=torch.float16),
                     torch.zeros(1, g, 16, 128, dtype=torch.float16))
        per_sequence = cache.nbytes() // 16 * 4096 * 32  # per token, 4,096 tokens, 32 layers
        fits[g] = 40 * 2 ** 30 // per_sequence
    return fits


def test_ex3_accepts_the_answer_from_the_cache(sequences_that_fit):
    assert ex3.check(sequences_that_fit)
    assert ex3.check([sequences_that_fit[g] for g in (32, 8, 1)])
    assert ex3.check(np.array([sequences_that_fit[g] for g in (32, 8, 1)], dtype=float))


@pytest.mark.parametrize("wrong", ["float32", "keys only", "GB", "reversed", "per layer"])
def test_ex3_refuses_typical_wrong_answers(sequences_that_fit, wrong):
    right = np.array([sequences_that_fit[g] for g in (32, 8, 1)])
    answers = {"float32": right // 2, "keys only": right * 2,
               "GB": (40e9 // (2 * 32 * np.array([32, 8, 1]) * 128 * 4096 * 2)),
               "reversed": right[::-1], "per layer": right * 32}[wrong]
    assert not ex3.check(answers)
