"""Notebook 05's exercises: what tests/exercises/test_exercises_declared.py cannot say.

``ANSWERS``: every variant's right answers, computed here in float64 NumPy from the task's
letter vectors by notebook 5's definitions of the regimes, never read from
d2lutil.exercises.nb05 (see tests/exercises/test_exercise_variants.py). Here: the variants
cover every regime, the hints, exercise 2's band of shares (its own checker) and the seeds
in force. Typical wrong answers: notebooks/solutions/05_solutions.ipynb.
"""

import functools
import math

import numpy as np
import pytest

from d2lutil import alignment
from d2lutil.exercises import Wrong, nb05
from d2lutil.exercises.nb05 import ex1, ex2, ex3

SHARP, SPLIT_TOTAL, DIFFUSE = 0.8, 0.8, 0.5  # notebook 5's definitions of the regimes


def weights(query_word, key_word, d, seed, scaled=True):
    table = alignment.letter_embeddings(d, seed).double().numpy()
    rows = [table[[ord(ch) - ord("a") for ch in word]] for word in (query_word, key_word)]
    scores = rows[0] @ rows[1].T / (math.sqrt(d) if scaled else 1.0)
    scores -= scores.max(axis=1, keepdims=True)
    return np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)


def regime_of(row, copies):
    """A row's regime by notebook 5's definitions, checked in its order."""
    if len(copies) == 1 and row[copies[0]] >= SHARP:
        return "sharp"
    if len(copies) >= 2 and row[copies].min() >= SPLIT_TOTAL / len(copies):
        return "split"
    if row.max() < DIFFUSE:
        return "diffuse"
    return "unclear"


def copies_of(letter, word):
    return [j for j, ch in enumerate(word) if ch == letter]


def copy_answers(letter, word, d, seed):
    row = weights(letter, word, d, seed)[0]
    return row[copies_of(letter, word)], regime_of(row, copies_of(letter, word))


def counts_of(first_seed, last_seed):
    """{d: seeds at which every letter of "attention" shows the regime its number of
    copies in "translation" predicts}."""
    def regimes_hold(d, seed):
        expected = {0: "diffuse", 1: "sharp"}
        return all(regime_of(row, copies_of(letter, "translation")) == expected.get(
            "translation".count(letter), "split") for row, letter in zip(
            weights("attention", "translation", d, seed), "attention", strict=True))

    return {d: sum(regimes_hold(d, seed) for seed in range(first_seed, last_seed + 1))
            for d in (128, 256)}


@functools.cache
def diffuse_shares():
    """Share of 400 seeds (others than the notebook's) where e's row is diffuse."""
    return tuple(float(np.mean([weights("e", "translation", d, seed)[0].max() < DIFFUSE
                                for seed in range(1000, 1400)])) for d in (16, 256))


def book_row(d, seed):
    """Exercise 3's right answers: the largest unscaled weight of e's row, and its key."""
    row = weights("attention", "translation", d, seed, scaled=False)["attention".index("e")]
    return row.max(), "translation"[row.argmax()]


ANSWERS = {ex1: copy_answers,  # see test_exercise_variants.py
           ex2: lambda **seeds: (counts_of(**seeds), diffuse_shares()),
           ex3: book_row}


def test_ex1_variants_show_every_regime():
    assert [copy_answers(**values)[1] for values in ex1.variants[:1]] == ["split"]
    assert {copy_answers(**values)[1] for values in ex1.variants[1:]} == {
        "sharp", "unclear", "diffuse"}


@pytest.mark.parametrize("shares, says", [
    ([378 / 400, 384 / 400], None),
    ([0.945, 0.96, 0.9], "expected two shares"),
    ([378, 384], "between 0 and 1"),  # counts, not shares
    ([1.0, 1.0], "use more seeds"),  # too few seeds
    ([0.945, 0.5], "the share at d = 256 is not right"),  # falls with d
    ([0.91, 0.985], "more than sampling noise")])
def test_ex2_the_diffuse_shares_are_judged_by_their_band(shares, says):
    result = ex2.check_part(1, shares)
    assert result.correct == (says is None) and (says or "correct") in result.message


def test_every_hint_quotes_its_variants_values_but_not_its_answers():
    for i, values in enumerate(ex1.variants):
        hints = " ".join(ex1.built(i)[1])
        assert (f'alignment_weights("{values["letter"]}", "{values["word"]}", '
                f'd={values["d"]}, seed={values["seed"]})') in hints
        copy_weights, _ = copy_answers(**values)
        assert f"{copy_weights[0]:.2f}" not in hints and f"{copy_weights[0]:.3f}" not in hints
    for i, values in enumerate(ex2.variants):
        assert f"{values['last_seed'] + 1}))`" in ex2.built(i)[1][0]
    for i, values in enumerate(ex3.variants):
        hints = " ".join(ex3.built(i)[1])
        assert f"letter_embeddings({values['d']}, {values['seed']})" in hints
        assert f"{book_row(**values)[0]:.2f}" not in hints


def test_the_parts_compute_their_answers_from_the_seeds_in_force():
    """Under a seed shift (tests/notebooks/robust.py) "seed 0" means seed K for the notebook
    and for the parts built then (the notebook imports the exercises after the shift): the
    parts hold no digits of seed 0 but compute them when built."""
    import seedshift

    seedshift.install(1)
    try:
        largest, letter = book_row(64, 0)
        weight_part, letter_part = (checker for _, checker in nb05._ex3_parts(64, 0))
        weight_part(largest)
        letter_part(letter)
        counts_part = nb05._ex2_parts(0, 19)[0][1]
        counts_part(counts_of(0, 19))
    finally:
        seedshift.uninstall()
    with pytest.raises(Wrong):  # seed 1's row, not 0's: the book's parts built unshifted
        ex3.parts[0][1](largest)
