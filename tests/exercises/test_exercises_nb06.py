"""Notebook 06's exercises: what tests/exercises/test_exercises_declared.py cannot say.

``ANSWERS``: every variant's right answers to exercises 2 and 3 by another route (the best
readout of random heads of its shape, projected exactly; a module of its shape, counted),
for tests/exercises/test_exercise_variants.py; the book's are trained, with typical slips,
in notebooks/solutions/06_solutions.ipynb. Here: the hints, the text, and what the
variants keep (each variant's shape was checked once by training: the module's docstring).
"""

import itertools
import re

import nbformat
import pytest
import torch

import book
from d2lutil.cost import count_parameters
from d2lutil.exercises.nb06 import ex2, ex3
from d2lutil.tasks import CopyBothModel

CHAPTER = book.ROOT / "notebooks" / "06_learned_heads.ipynb"
SOLUTIONS = book.ROOT / "notebooks" / "solutions" / "06_solutions.ipynb"


def best_readout_errors(num_hiddens, h, d_x, seed=0):
    """The mean over the subsets of each size s of the error of the best linear readout
    of s random heads, {s: error}: each head a softmax mixture of the two values an output
    needs, projected by its own p x d_x block of W_v, and the readout's error on white
    Gaussian targets 1 - trace(projection onto what the kept heads hand on) / (2 d_x)."""
    p = num_hiddens // h
    generator = torch.Generator().manual_seed(seed)
    weights = torch.softmax(torch.randn(h, 2, generator=generator, dtype=torch.float64), 1)
    W_v = torch.randn(h, p, d_x, generator=generator, dtype=torch.float64)
    # head i hands on [a_i W_v_i, b_i W_v_i] u for u = [x_j; x_(m+1-j)]: (h, p, 2 d_x)
    maps = torch.cat([weights[:, :1, None] * W_v, weights[:, 1:, None] * W_v], dim=2)
    errors = {}
    for s in range(1, h + 1):
        each = []
        for kept in itertools.combinations(range(h), s):
            M = maps[list(kept)].reshape(-1, 2 * d_x)
            projection = torch.linalg.pinv(M) @ M
            each.append(1 - float(torch.trace(projection)) / (2 * d_x))
        errors[s] = sum(each) / len(each)
    return errors


def pruned_parameters(num_hiddens, h):
    """The parameters of the h - 2 heads outside a pair, counted on the attention module
    of the variant's shape (values 8 wide, as in the notebook): every head owns the same
    share of W_q, W_k, W_v and W_o."""
    attention = CopyBothModel(num_hiddens, h).attention
    total = sum(p.numel() for p in attention.parameters())
    assert total % h == 0
    return total // h * (h - 2), total // h, total


ANSWERS = {ex2: lambda **values: (best_readout_errors(**values),),  # see
           ex3: lambda **values: (2, pruned_parameters(**values)[0])}  # test_exercise_variants

# d2lutil calls whose result a student might hand in (test_exercises_understanding.py):
# the parameters of the variant's whole attention module
LIBRARY_CALLS = {ex3: [
    lambda num_hiddens, h: count_parameters(CopyBothModel(num_hiddens, h).attention)]}


@pytest.mark.parametrize("i", range(len(ex2.variants)))
def test_ex2_hints_train_the_variants_shape_and_give_the_method_not_the_numbers(i):
    """No hint states a refitted error or the formula that gives them all."""
    values = ex2.variants[i]
    parts, hints = ex2.built(i)
    hint = " ".join(hints)
    assert "num_steps=800" in hint and f"num_heads={values['h']}" in hint
    if i:
        assert f"num_hiddens={values['num_hiddens']}" in hint
        assert f"m={values['d_x']}" in hint and f"d_x = {values['d_x']}" in hint
    h, text, errors = values["h"], hint.replace(" ", ""), parts[0][1].expected
    for k in range(1, h):
        for digits in (2, 3):
            assert f"{errors[k - 1]:.{digits}f}".lstrip("0") not in text, k
    for formula in (f"1-2k/{2 * h}", f"1-k/{h}", f"2k/{2 * h}", f"k/{h}", f"1-s/{h}",
                    f"s/{h}"):
        assert formula not in text


def test_ex2_states_the_steps_the_solution_trains():
    """The exercise and its hint say how long to train: as long as the solution does."""
    solutions = nbformat.read(SOLUTIONS, as_version=4)
    code = "\n".join(c.source for c in solutions.cells if c.cell_type == "code")
    steps = re.findall(r"train\(num_heads=8, num_steps=(\d+)\)", code)
    assert len(steps) == 1
    nb = nbformat.read(CHAPTER, as_version=4)
    exercise = next(c.source for c in nb.cells
                    if c.cell_type == "markdown" and c.source.startswith("2. "))
    for text in (exercise, " ".join(ex2.hints)):
        assert f"{steps[0]} steps" in " ".join(text.split())
        assert f"num_steps={steps[0]}" in text


def test_the_variants_keep_what_the_text_and_the_solution_rely_on():
    """Exercise 2: the text's "heads of width 2", and h p = 2 d_x (all heads reaching 0
    makes any subset independent, the solution's argument); h = 4 is the lesson's own
    table. Exercise 3: heads at least as wide as a value, so one head leaves 1/2 and a
    pair of different mixtures 0: the smallest set holds two heads (its open-book part)."""
    for values in ex2.variants:
        assert values["num_hiddens"] == 2 * values["h"] == 2 * values["d_x"]
        assert values["h"] not in (2, 4)
    assert set(ex3.open_book) == {0}
    for values in ex3.variants:
        assert values["num_hiddens"] % values["h"] == 0
        assert values["num_hiddens"] // values["h"] >= 8 and values["h"] >= 3


@pytest.mark.parametrize("i", range(len(ex3.variants)))
def test_ex3_hints_stop_short_of_the_count(i):
    text = " ".join(ex3.built(i)[1])
    for number in pruned_parameters(**ex3.variants[i]):
        assert not re.search(rf"(?<![\d,]){number:,}(?![\d,])", text)
        assert not re.search(rf"(?<!\d){number}(?!\d)", text)
