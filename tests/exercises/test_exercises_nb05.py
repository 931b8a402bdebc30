"""Notebook 05's exercises: what tests/exercises/test_exercises_declared.py cannot say.

Every exercise has variants (issue 35). The letter vectors are the task's
(``alignment.letter_embeddings``); everything after them (scaled dot products, softmax,
the regimes by their definition in notebook 5) is computed here in float64 NumPy, never
read from d2lutil.exercises.nb05 (whose parts compute them with d2lutil.alignment, as the
solutions notebook does). That for every variant its right answers (``ANSWERS``) pass,
the book's fail on the parts that vary, and its declared mistakes get their messages,
tests/exercises/test_exercise_variants.py checks; here, the other forms accepted, the
book's answers named as the book's, and the typical mistakes. Exercise 2's share of
diffuse rows (open-book, a band) has its own checker, tested here.
"""

import math

import numpy as np
import pytest
import torch

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


def expected_regime(letter, key_word):
    count = key_word.count(letter)
    return "diffuse" if count == 0 else "sharp" if count == 1 else "split"


def regimes_hold(query_word, key_word, d, seed):
    """Every letter shows the regime its number of copies in key_word predicts."""
    w = weights(query_word, key_word, d, seed)
    return all(regime_of(row, [j for j, ch in enumerate(key_word) if ch == letter])
               == expected_regime(letter, key_word)
               for row, letter in zip(w, query_word, strict=True))


# --- exercise 1 ----------------------------------------------------------------------------

def copy_answers(letter, word, d, seed):
    row = weights(letter, word, d, seed)[0]
    copies = [j for j, ch in enumerate(word) if ch == letter]
    return row[copies], regime_of(row, copies)


def test_ex1_every_variant_accepts_its_weights_and_regime_in_other_forms():
    for i, values in enumerate(ex1.variants):
        copy_weights, regime = copy_answers(**values)
        variant = ex1.for_variant(i)
        assert variant.check(torch.tensor(copy_weights), regime.upper())
        if len(copy_weights) == 1:  # one copy: one number, or a list of one
            assert variant.check(float(copy_weights[0]), regime)


def test_ex1_the_books_answers_fail_every_other_variant():
    book = copy_answers(**ex1.variants[0])
    assert book[1] == "split" and not ex1.open_book
    regimes = set()
    for i in range(1, len(ex1.variants)):
        variant = ex1.for_variant(i)
        regimes.add(copy_answers(**ex1.variants[i])[1])
        for j, answer in enumerate(book):
            assert not variant.check_part(j, answer), (i, j)
        assert not variant.check_part(0, book[0][:1])  # one of the book's copies
    assert regimes == {"sharp", "unclear", "diffuse"}  # every regime but the book's


def test_ex1_mistakes_of_every_variant():
    for i, values in enumerate(ex1.variants):
        if (values["d"], values["seed"]) == (64, 0):
            continue
        copy_weights, _ = copy_answers(**values)
        defaults, _ = copy_answers(values["letter"], values["word"], 64, 0)
        said = ex1.for_variant(i).check_part(0, defaults).message
        assert ("defaults" in said) == (abs(defaults - copy_weights).max() > 0.02), said


@pytest.mark.parametrize("answer", [[0.5, 0.25, 0.25], [1 / 3, 1 / 3]])
def test_ex1_refuses_a_wrong_copy_or_a_wrong_number_of_copies(answer):
    assert not ex1.check(answer, "split")


# --- exercise 2 ----------------------------------------------------------------------------

def counts_of(first_seed, last_seed):
    return {d: sum(regimes_hold("attention", "translation", d, seed)
                   for seed in range(first_seed, last_seed + 1)) for d in (128, 256)}


@pytest.fixture(scope="module")
def counts():
    return [counts_of(**values) for values in ex2.variants]


@pytest.fixture(scope="module")
def diffuse_shares():
    """Share of 400 seeds (others than the notebook's) where e's row is diffuse."""
    return [np.mean([weights("e", "translation", d, seed)[0].max() < DIFFUSE
                     for seed in range(1000, 1400)]) for d in (16, 256)]


def test_ex2_every_variant_accepts_its_counts(counts, diffuse_shares):
    for i, variant_counts in enumerate(counts):
        variant = ex2.for_variant(i)
        assert variant.check(variant_counts, diffuse_shares), i
        assert variant.check((variant_counts[128], variant_counts[256]),
                             np.array(diffuse_shares))
        assert variant.check(torch.tensor([variant_counts[128], variant_counts[256]]),
                             (0.945, 0.96))


def test_ex2_the_books_counts_fail_every_other_variant(counts, diffuse_shares):
    assert counts[0] == {128: 17, 256: 20}  # as the solutions notebook prints
    assert sorted(ex2.open_book) == [1]
    for i in range(1, len(ex2.variants)):
        variant = ex2.for_variant(i)
        said = variant.check_part(0, counts[0]).message
        assert "the book's" in said, said
        assert variant.check_part(1, diffuse_shares)  # the band is everyone's


def test_ex2_refuses_typical_wrong_answers(counts, diffuse_shares):
    right = (counts[0], diffuse_shares)
    answers = {
        "all twenty": ({128: 20, 256: 20}, diffuse_shares),
        "swapped": ([counts[0][256], counts[0][128]], diffuse_shares),
        "counts of 400": (counts[0], [400 * s for s in diffuse_shares]),
        "falls with d": (counts[0], [diffuse_shares[0], 0.5]),
        "every seed": (counts[0], [1.0, 1.0]),
        "keys": ({64: 1, 128: 2}, diffuse_shares),
    }
    for wrong in answers.values():
        assert wrong != right
        assert not ex2.check(*wrong)


# --- exercise 3 ----------------------------------------------------------------------------

def unscaled_e_row(d, seed):
    row = weights("attention", "translation", d, seed, scaled=False)["attention".index("e")]
    scaled = weights("attention", "translation", d, seed)["attention".index("e")]
    return row.max(), "translation"[row.argmax()], scaled.max()


def book_row(d, seed):
    """Exercise 3's right answers: the largest unscaled weight of e's row, and its key."""
    return unscaled_e_row(d, seed)[:2]


ANSWERS = {ex1: copy_answers, ex3: book_row}  # see test_exercise_variants.py


def test_ex3_every_variant_accepts_its_unscaled_row_in_other_forms():
    for i, values in enumerate(ex3.variants):
        largest, letter, _ = unscaled_e_row(**values)
        variant = ex3.for_variant(i)
        assert variant.check(torch.tensor(largest, dtype=torch.float32), letter.upper())
        assert variant.check(round(largest, 2), letter)


def test_ex3_the_books_answers_fail_every_other_variant():
    book = book_row(**ex3.variants[0])
    assert not ex3.open_book
    for i in range(1, len(ex3.variants)):
        variant = ex3.for_variant(i)
        for j, answer in enumerate(book):
            said = variant.check_part(j, answer).message
            assert "the book's" in said, (i, j, said)


def test_ex3_mistakes_of_every_variant():
    for i, values in enumerate(ex3.variants):
        largest, letter, scaled = unscaled_e_row(**values)
        variant = ex3.for_variant(i)
        assert "scaling" in variant.check_part(0, scaled).message
        assert "does not occur" in variant.check_part(1, "e").message
        assert not variant.check(1.0 if largest < 0.99 else 0.5, letter)
        assert not variant.check(largest, "z")


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
        assert f"{unscaled_e_row(**values)[0]:.2f}" not in hints


# --- the seeds in force --------------------------------------------------------------------

def test_the_parts_compute_their_answers_from_the_seeds_in_force():
    """Under a seed shift (tests/notebooks/robust.py) "seed 0" means seed K for the notebook
    and for the parts built then (the notebook imports the exercises after the shift): the
    parts hold no digits of seed 0 but compute them when built."""
    import seedshift

    seedshift.install(1)
    try:
        largest, letter, _ = unscaled_e_row(64, 0)
        weight_part, letter_part = (checker for _, checker in nb05._ex3_parts(64, 0))
        weight_part(largest)
        letter_part(letter)
        counts_part = nb05._ex2_parts(0, 19)[0][1]
        counts_part(counts_of(0, 19))
    finally:
        seedshift.uninstall()
    with pytest.raises(Wrong):  # seed 1's row, not 0's: the book's parts built unshifted
        ex3.parts[0][1](largest)
