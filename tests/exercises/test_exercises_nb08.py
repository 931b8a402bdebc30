"""Notebook 08's exercises, every variant: what test_exercises_declared.py cannot say.

Each exercise has variants (d2lutil.exercises.variants): another -stion word for
exercise 1, another length for exercise 2, another pair of words for exercise 3. For
every variant the right answers, computed here by the solutions notebook's route (an
untrained ``Translator``'s attention weights, a forward hook on a bare
``MultiHeadAttention``), pass, and the book's answers fail on every part that varies
(that every variant's declared mistakes get their messages, and that its varied parts
differ from the book's, tests/exercises/test_exercise_variants.py checks).
The variants carry their words' pronunciations, checked here against the dictionary, so
building a variant's checks reads no dictionary.

Exercise 3's mask is checked by a reading of the answer around ``numbers_close``: the
declared tests give it numbers; here it gets what a student builds, a boolean tensor or
array, also with a query axis of 1 that broadcasts, and a mask without the heads' axis,
which would not line up with the weights, is refused.
"""

import functools
import re
import time

import numpy as np
import pytest
import torch

import d2lutil
from d2lutil import masks, pronunciations, translator
from d2lutil.exercises.nb08 import ex1, ex2, ex3

EXERCISES = [ex1, ex2, ex3]
VARIANTS = [(exercise, i) for exercise in EXERCISES
            for i in range(len(exercise.variants))]


def ids(case):
    exercise, i = case
    return f"{exercise.name}-v{i}"


@functools.cache
def the_lab():
    """The dictionary, the vocabularies, and an untrained translator (any weights do:
    which keys a row sees, and the shapes, are the same for every weights)."""
    entries = pronunciations.load_dictionary()
    letters = pronunciations.letter_vocab()
    phonemes = pronunciations.phoneme_vocab(entries)
    state = torch.get_rng_state()
    torch.manual_seed(0)
    model = translator.Translator(len(letters), len(phonemes),
                                  pronunciations.MAX_LETTERS,
                                  translator.target_len(entries)).eval()
    torch.set_rng_state(state)
    return entries, letters, phonemes, model


@pytest.fixture(scope="module")
def lab():
    return the_lab()


def run(lab, words):
    """The batch of ``words``, run through the translator teacher forced."""
    entries, letters, phonemes, model = lab
    batch = pronunciations.make_batch(words, entries, letters, phonemes)
    with torch.no_grad():
        model(batch["source"], batch["source_valid_lens"], batch["decoder_input"])
    return batch, model


# --- the variants -------------------------------------------------------------------------

def test_the_variants_carry_the_dictionarys_pronunciations(lab):
    entries = lab[0]
    stion = {w for w, said in entries.items()
             if w.endswith("stion") and said[-4:] == ("S", "CH", "AH", "N")}
    words = [v["word"] for v in ex1.variants]
    assert words[0] == "question" and len(set(words)) == len(words)
    for v in ex1.variants:
        assert v["word"] in stion, v
        assert v["phonemes"] == " ".join(entries[v["word"]]), v
    pairs = [tuple(v["words"]) for v in ex3.variants]
    assert pairs[0] == ("box", "knight") and len(set(pairs)) == len(pairs)
    for v in ex3.variants:
        more, fewer = v["words"]
        assert v["phonemes"] == [" ".join(entries[w]) for w in v["words"]], v
        # as in the book: one word with more phonemes than letters, one with fewer
        assert len(entries[more]) > len(more) and len(entries[fewer]) < len(fewer), v
    assert ex2.variants[0] == {"num_phonemes": 10}


def test_building_a_variant_reads_no_dictionary_and_takes_milliseconds(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a variant's checks must not read the dictionary")

    monkeypatch.setattr(pronunciations, "load_dictionary", refuse)
    monkeypatch.setattr(pronunciations, "parse_dictionary", refuse)
    for exercise in EXERCISES:
        for values in exercise.variants:
            start = time.perf_counter()
            exercise._make_parts(**values)
            exercise._make_hints(**values)
            assert time.perf_counter() - start < 0.05, (exercise.name, values)


def test_only_the_deciding_letter_is_open_book():
    assert ex1.open_book.keys() == {2} and not ex2.open_book and not ex3.open_book
    for i in range(1, len(ex1.variants)):
        assert ex1.built(i)[0][2][1].expected == -1  # the same for every -stion word


# --- every variant: the right answers (see test_exercise_variants.py) ----------------------

def stion_answers(word, phonemes=None):
    """The keys the row that predicts CH sees, in the decoder's self- and cross-attention
    (every head alike), and the open-book -1 (``phonemes``, which the variant carries, is
    read from the dictionary instead)."""
    lab = the_lab()
    batch, model = run(lab, [word])
    entries, _, phonemes, _ = lab
    row = entries[word].index("CH")  # the row that predicts CH
    given = [phonemes.tokens[k] for k in batch["decoder_input"][0, :row + 1]]
    assert given[-1] == "S"
    seen = [(getattr(model.decoder, name).attention_weights[0, :, row] > 0).sum(-1)
            for name in ("self_attention", "cross_attention")]
    assert all(len(set(counts.tolist())) == 1 for counts in seen)  # every head alike
    self_keys, cross_keys = (int(counts[0]) for counts in seen)
    return self_keys, cross_keys, -1


def projected_answers(num_phonemes):
    """Keys projected in a decode without a cache and with one, counted by a hook on
    W_k, after checking that both decodes give the same outputs."""
    num_steps = num_phonemes + 1  # the last step gives <eos>
    state = torch.get_rng_state()
    torch.manual_seed(0)
    d = 16
    layer = d2lutil.MultiHeadAttention(d, 4, query_size=d, key_size=d,
                                       value_size=d).eval()
    X = torch.randn(1, num_steps, d)
    torch.set_rng_state(state)
    counted = []
    layer.W_k.register_forward_hook(
        lambda module, inputs, output: counted.append(inputs[0].shape[1]))
    projected, outputs, cache = {}, {"without": [], "with": []}, d2lutil.KVCache()
    with torch.no_grad():
        for name in ("without", "with"):
            counted.clear()
            for t in range(num_steps):
                if name == "with":
                    x = X[:, t:t + 1]
                    outputs[name].append(layer(x, x, x, cache=cache))
                else:
                    prefix = X[:, :t + 1]
                    Y = layer(prefix, prefix, prefix, torch.arange(1, t + 2)[None])
                    outputs[name].append(Y[:, -1:])
            projected[name] = sum(counted)
    assert torch.allclose(torch.cat(outputs["with"], 1), torch.cat(outputs["without"], 1),
                          atol=1e-5)
    return projected["without"], projected["with"]


def cross_mask_answers(words, phonemes=None):
    """The cross-attention weights' shape, and the mask its valid lengths make, after
    checking that no weight stands where it is False (``phonemes`` as for exercise 1)."""
    batch, model = run(the_lab(), words)
    weights = model.decoder.cross_attention.attention_weights  # (2, 4, T, S)
    T, S = weights.shape[2:]
    lens = batch["source_valid_lens"]
    cross_mask = (torch.arange(S) < lens[:, None, None, None]).expand(-1, 1, T, -1)
    assert (weights.masked_fill(cross_mask, 0) == 0).all()  # no weight where False
    assert torch.equal(cross_mask, masks.valid_lens_to_bool(lens, S).expand(-1, 1, T, -1))
    return tuple(weights.shape), cross_mask


ANSWERS = {ex1: stion_answers, ex2: projected_answers, ex3: cross_mask_answers}


def test_the_books_answers_are_the_solutions():
    assert stion_answers(**ex1.variants[0]) == (5, 8, -1)
    assert projected_answers(**ex2.variants[0]) == (66, 11)
    assert ex3.variants[0]["words"] == ["box", "knight"]


# --- every variant: mistakes, messages, hints ---------------------------------------------

@pytest.mark.parametrize("case", VARIANTS, ids=ids)
def test_the_hints_name_the_variants_values_not_its_answers(case):
    exercise, i = case
    values = exercise.variants[i]
    parts, hints = exercise.built(i)
    text = " ".join(hints)
    named = values.get("word") or values.get("num_phonemes") or values["words"][1]
    assert str(named) in text, (values, text)
    answers = [c.expected for _, c in parts if np.ndim(c.expected) == 0
               and c.expected != -1]
    for answer in answers:
        assert not re.search(rf"(?<![\d.]){answer:.0f}(?![\d.])", text), (answer, text)
    if exercise is ex3:  # the shape, as the student would write it
        shape = ", ".join(f"{n:.0f}" for n in parts[0][1].expected)
        assert shape not in text


# --- exercise 3's mask in the forms a student builds ----------------------------------------

@pytest.mark.parametrize("i", range(len(ex3.variants)))
def test_ex3_accepts_boolean_masks_in_the_forms_that_broadcast(lab, i):
    batch, _ = run(lab, ex3.variants[i]["words"])
    lens = batch["source_valid_lens"]
    T, S = batch["decoder_input"].shape[1], batch["source"].shape[1]
    exercise = ex3.for_variant(i)
    shape = (2, 4, T, S)
    narrow = torch.arange(S) < lens[:, None, None, None]  # (2, 1, 1, S)
    for mask in (narrow, narrow.expand(-1, 1, T, -1), narrow.numpy(),
                 narrow.expand(-1, 1, T, -1).tolist()):
        assert exercise.check(shape, mask)


@pytest.mark.parametrize("form", ["heads expanded", "no head axis", "inverted"])
@pytest.mark.parametrize("i", range(len(ex3.variants)))
def test_ex3_refuses_a_mask_of_the_wrong_form(lab, i, form):
    batch, _ = run(lab, ex3.variants[i]["words"])
    lens = batch["source_valid_lens"]
    T, S = batch["decoder_input"].shape[1], batch["source"].shape[1]
    mask = (torch.arange(S) < lens[:, None, None, None]).expand(-1, 1, T, -1)
    wrong = {"heads expanded": mask.expand(-1, 4, -1, -1), "no head axis": mask[:, 0],
             "inverted": ~mask}[form]
    result = ex3.for_variant(i).check_part(1, wrong)  # the mask's part alone
    assert not result.correct
    assert ("shape" in result.message) == (form != "inverted"), result.message
