"""Notebook 09's exercises, every variant: what test_exercises_declared.py cannot say.

Exercise 1 reads the shipped trained model and is the same for everyone (its answers
asserted by notebooks/solutions/09_solutions.ipynb). Exercise 2's variants change the
number of heads and the head, the width staying 64: the right answers, read off a bare
``MultiHeadAttention`` as the solutions notebook reads them (the input columns of ``W_o``
that a head switched off leaves at zero, and the entries of its block of ``W_o``), are
``ANSWERS`` (see tests/exercises/test_exercise_variants.py). Here: the hints, and exercise
1's hint followed word for word after a full run of notebook 9 (its names still mean what
the hint says: tests/notebooks/hygiene.py keeps loops from rebinding them).
"""

import functools
import re

import nbformat
import pytest
import torch

import book
import d2lutil
from d2lutil.exercises.nb09 import ex2

# Exercise 1's hint, followed with the notebook's names; the check's verdict is printed.
FOLLOW_HINT = """\
g_jh = letter_rows("g", "eiy", "JH")
said_g = {i: turned(teacher_forced(head_off(i))[1], g_jh, "G") for i in range(num_heads)}
turner = max(said_g, key=said_g.get)
role = {anchor: "anchor", look: "look-ahead"}.get(turner, "other")
missed_more = 1 - turned(choice_all, g_jh, "JH") > 1 - turned(choice_all, soft, "S")
print(ex1.check(role, missed_more))"""


def read_off(num_hiddens, num_heads, head):
    """(first column of ``head``'s slice, entries of its block of W_o), measured."""
    state = torch.get_rng_state()
    torch.manual_seed(0)
    attention = d2lutil.MultiHeadAttention(num_hiddens, num_heads, query_size=num_hiddens,
                                           key_size=num_hiddens, value_size=num_hiddens)
    X = torch.randn(1, 5, num_hiddens)
    torch.set_rng_state(state)
    seen = {}
    attention.W_o.register_forward_pre_hook(lambda module, inputs: seen.update(X=inputs[0]))
    head_mask = torch.ones(num_heads).index_fill(0, torch.tensor([head]), 0.0)
    with torch.no_grad():
        attention(X, X, X, head_mask=head_mask)
    zero = (seen["X"] == 0).all(dim=1)[0]  # the columns the head fills
    columns = zero.nonzero()[:, 0]
    assert columns.tolist() == list(range(columns.min(), columns.max() + 1))
    block = attention.W_o.weight.reshape(num_hiddens, num_heads, -1)[:, head]
    return columns.min().item(), block.numel()


ANSWERS = {ex2: functools.partial(read_off, 64)}  # see test_exercise_variants.py

# d2lutil calls whose result a student might hand in (test_exercises_understanding.py):
# the entries of the whole W_o of a MultiHeadAttention of the variant's heads
LIBRARY_CALLS = {ex2: [
    lambda num_heads, head: d2lutil.MultiHeadAttention(
        64, num_heads, query_size=64, key_size=64, value_size=64).W_o.weight.numel()]}


@pytest.mark.parametrize("i", range(len(ex2.variants)))
def test_ex2_hints_name_the_head_not_the_answers(i):
    values = ex2.variants[i]
    parts, hints = ex2.built(i)
    text = " ".join(hints)
    assert f"head {values['head']}'s" in text and str(values["num_heads"]) in text
    for _, checker in parts:
        assert not re.search(rf"(?<![\d.]){checker.expected}(?![\d.])", text), (
            checker.expected, text)


def test_ex1_hint_leads_to_the_answer_after_a_full_run():
    path = book.ROOT / "notebooks" / "09_reading_the_heads.ipynb"
    nb = book.clear_outputs(book.read(path))
    nb.cells.append(nbformat.v4.new_code_cell(FOLLOW_HINT))
    book.notebook_client(nb, path).execute()
    assert nb.cells[-1].outputs[-1].text.strip().endswith("True"), nb.cells[-1].outputs
