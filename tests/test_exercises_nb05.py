"""Notebook 05's exercises: what tests/test_exercises_declared.py cannot say.

Most of their checkers are written in d2lutil.exercises.nb05 (they compute their answers
when checking, for the seeds asked), so they are tested here; so is what exercise 1's
checker adds to the one it wraps. The letter vectors are the task's
(``alignment.letter_embeddings``); everything after them (scaled dot products, softmax,
the regimes by their definition in notebook 5) is computed here in float64 NumPy, never
read from d2lutil.exercises.nb05 (whose checkers compute them with d2lutil.alignment,
as the solutions notebook does).
"""

import math

import numpy as np
import pytest
import torch

from d2lutil import alignment
from d2lutil.exercises.nb05 import ex1, ex2, ex3

SHARP, SPLIT_TOTAL, DIFFUSE = 0.8, 0.8, 0.5  # notebook 5's definitions of the regimes


def weights(query_word, key_word, d, seed, scaled=True):
    table = alignment.letter_embeddings(d, seed).double().numpy()
    rows = [table[[ord(ch) - ord("a") for ch in word]] for word in (query_word, key_word)]
    scores = rows[0] @ rows[1].T / (math.sqrt(d) if scaled else 1.0)
    scores -= scores.max(axis=1, keepdims=True)
    return np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)


def regimes_hold(query_word, key_word, d, seed):
    """Every letter shows the regime its number of copies in key_word predicts."""
    w = weights(query_word, key_word, d, seed)
    for row, letter in zip(w, query_word, strict=True):
        copies = [j for j, ch in enumerate(key_word) if ch == letter]
        if len(copies) == 1:
            holds = row[copies[0]] >= SHARP
        elif copies:
            holds = row[copies].min() >= SPLIT_TOTAL / len(copies)
        else:
            holds = row.max() < DIFFUSE
        if not holds:
            return False
    return True


@pytest.mark.parametrize("answer", [[0.5, 0.25, 0.25], [1 / 3, 1 / 3]])
def test_ex1_refuses_a_wrong_copy_or_a_wrong_number_of_copies(answer):
    assert not ex1.check(answer, "split")  # one number or three: checked in nb05.py


@pytest.fixture(scope="module")
def counts():
    return {d: sum(regimes_hold("attention", "translation", d, seed) for seed in range(20))
            for d in (128, 256)}


@pytest.fixture(scope="module")
def diffuse_shares():
    """Share of 400 seeds (others than the notebook's) where e's row is diffuse."""
    return [np.mean([weights("e", "translation", d, seed)[0].max() < DIFFUSE
                     for seed in range(1000, 1400)]) for d in (16, 256)]


def test_ex2_accepts_the_counted_answers(counts, diffuse_shares):
    assert ex2.check(counts, diffuse_shares)
    assert ex2.check((counts[128], counts[256]), np.array(diffuse_shares))
    assert ex2.check(torch.tensor([counts[128], counts[256]]), (0.945, 0.96))


@pytest.mark.parametrize("wrong", ["all twenty", "swapped", "counts of 400", "falls with d",
                                   "every seed", "keys"])
def test_ex2_refuses_typical_wrong_answers(counts, diffuse_shares, wrong):
    right = (counts, diffuse_shares)
    answers = {
        "all twenty": ({128: 20, 256: 20}, diffuse_shares),
        "swapped": ([counts[256], counts[128]], diffuse_shares),
        "counts of 400": (counts, [400 * s for s in diffuse_shares]),
        "falls with d": (counts, [diffuse_shares[0], 0.5]),
        "every seed": (counts, [1.0, 1.0]),
        "keys": ({64: 1, 128: 2}, diffuse_shares),
    }[wrong]
    assert answers != right
    assert not ex2.check(*answers)


@pytest.fixture(scope="module")
def unscaled_e_row():
    row = weights("attention", "translation", 64, 0, scaled=False)["attention".index("e")]
    return row.max(), "translation"[row.argmax()]


def test_ex3_accepts_the_unscaled_row(unscaled_e_row):
    largest, letter = unscaled_e_row
    assert ex3.check(largest, letter)
    assert ex3.check(torch.tensor(largest, dtype=torch.float32), letter.upper())
    assert ex3.check(round(largest, 2), letter)


def test_ex3_refuses_typical_wrong_answers(unscaled_e_row):
    largest, letter = unscaled_e_row
    scaled = weights("attention", "translation", 64, 0)["attention".index("e")].max()
    assert not ex3.check(scaled, letter)           # kept the scaling
    assert not ex3.check(largest, "e")             # e is not in translation
    assert not ex3.check(1.0, letter)
    assert not ex3.check(largest, "z")


def test_ex2_and_ex3_check_the_seeds_that_were_asked_for():
    """Under a seed shift (tests/robust.py) "seed 0" means seed K for the notebook and the
    check alike: the checks compute their answers then, they hold no digits of seed 0."""
    import seedshift

    seedshift.install(1)
    try:
        row = weights("attention", "translation", 64, 0, scaled=False)["attention".index("e")]
        assert ex3.check(row.max(), "translation"[row.argmax()])
        counts = [sum(regimes_hold("attention", "translation", d, seed) for seed in range(20))
                  for d in (128, 256)]
        assert ex2.check(counts, (0.95, 0.95))
    finally:
        seedshift.uninstall()
    assert not ex3.check(row.max(), "translation"[row.argmax()])  # seed 1's row, not 0's
