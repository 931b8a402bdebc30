"""Notebook 08's exercises: what tests/test_exercises_declared.py cannot say.

Exercise 3's mask is checked by a checker written in d2lutil.exercises.nb08 around
``numbers_close``: the declared tests give it numbers; here it gets what a student
builds, a boolean tensor or array, also with a query axis of 1 that broadcasts, and a
mask without the heads' axis, which would not line up with the weights, is refused.
"""

import pytest
import torch

from d2lutil import pronunciations
from d2lutil.exercises.nb08 import ex3


@pytest.fixture(scope="module")
def box_knight():
    """The lengths of the batch of exercise 3: letters, and (T, S)."""
    entries = pronunciations.load_dictionary()
    batch = pronunciations.make_batch(["box", "knight"], entries,
                                      pronunciations.letter_vocab(),
                                      pronunciations.phoneme_vocab(entries))
    return batch["source_valid_lens"], batch["decoder_input"].shape[1], \
        batch["source"].shape[1]


def test_ex3_accepts_boolean_masks_in_the_forms_that_broadcast(box_knight):
    lens, T, S = box_knight
    shape = (2, 4, T, S)
    narrow = torch.arange(S) < lens[:, None, None, None]  # (2, 1, 1, S)
    for mask in (narrow, narrow.expand(-1, 1, T, -1), narrow.numpy(),
                 narrow.expand(-1, 1, T, -1).tolist()):
        assert ex3.check(shape, mask)


@pytest.mark.parametrize("form", ["heads expanded", "no head axis", "inverted"])
def test_ex3_refuses_a_mask_of_the_wrong_form(box_knight, form):
    lens, T, S = box_knight
    mask = (torch.arange(S) < lens[:, None, None, None]).expand(-1, 1, T, -1)
    wrong = {"heads expanded": mask.expand(-1, 4, -1, -1), "no head axis": mask[:, 0],
             "inverted": ~mask}[form]
    result = ex3.check_part(1, wrong)  # the mask's part alone
    assert not result.correct
    assert ("shape" in result.message) == (form != "inverted"), result.message

