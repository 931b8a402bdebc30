"""Notebook 08's exercises, every variant: what test_exercises_declared.py cannot say.

Each exercise has variants (d2lutil.exercises.variants): another -stion word for
exercise 1, another length for exercise 2, another pair of words for exercise 3. For
every variant the right answers, computed by the solutions notebook's route (an
untrained ``Translator``'s attention weights, a forward hook on a bare
``MultiHeadAttention``), are ``ANSWERS`` (see tests/exercises/test_exercise_variants.py).
The variants carry their words' pronunciations, checked here against the dictionary, so
building a variant's checks reads no dictionary.

Exercise 3's mask is checked by a reading of the answer around ``numbers_close``: the
declared tests give it numbers; here it gets what a student builds, a boolean tensor or
array, also with a query axis of 1 that broadcasts. The masks of a wrong form and what
the check says to them are in notebooks/solutions/08_solutions.ipynb.
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


def run(words):
    """The batch of ``words``, run through the translator teacher forced."""
    entries, letters, phonemes, model = the_lab()
    batch = pronunciations.make_batch(words, entries, letters, phonemes)
    with torch.no_grad():
        model(batch["source"], batch["source_valid_lens"], batch["decoder_input"])
    return batch, model


def test_the_variants_carry_the_dictionarys_pronunciations():
    entries = the_lab()[0]
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


def stion_answers(word, phonemes=None):
    """The keys the row that predicts CH sees, in the decoder's self- and cross-attention
    (every head alike), and the open-book -1 (``phonemes``, which the variant carries, is
    read from the dictionary instead)."""
    batch, model = run([word])
    entries, _, phonemes, _ = the_lab()
    row = entries[word].index("CH")  # the row that predicts CH
    given = [phonemes.tokens[k] for k in batch["decoder_input"][0, :row + 1]]
    assert given[-1] == "S"
    seen = [(getattr(model.decoder, name).attention_weights[0, :, row] > 0).sum(-1)
            for name in ("self_attention", "cross_attention")]
    assert all(len(set(counts.tolist())) == 1 for counts in seen)  # every head alike
    self_keys, cross_keys = (int(counts[0]) for counts in seen)
    return self_keys, cross_keys, -1


def projected_answers(num_phonemes):
    """Keys projected in a decode without a cache and with one, counted by a hook on W_k
    (that both give the same outputs, tests/library/test_kv_cache.py checks)."""
    num_steps, d = num_phonemes + 1, 16  # the last step gives <eos>
    layer = d2lutil.MultiHeadAttention(d, 4, query_size=d, key_size=d, value_size=d)
    X = torch.zeros(1, num_steps, d)
    counted = []
    layer.W_k.register_forward_hook(
        lambda module, inputs, output: counted.append(inputs[0].shape[1]))
    cache = d2lutil.KVCache()
    with torch.no_grad():
        for t in range(num_steps):  # the whole prefix, causal
            prefix = X[:, :t + 1]
            layer(prefix, prefix, prefix, torch.arange(1, t + 2)[None])
        without = sum(counted)
        for t in range(num_steps):  # the newest token; the cache has the rest
            layer(X[:, t:t + 1], X[:, t:t + 1], X[:, t:t + 1], cache=cache)
    return without, sum(counted) - without


def cross_mask_answers(words, phonemes=None):
    """The cross-attention weights' shape, and the mask its valid lengths make, after
    checking that no weight stands where it is False (``phonemes`` as for exercise 1)."""
    batch, model = run(words)
    weights = model.decoder.cross_attention.attention_weights  # (2, 4, T, S)
    T, S = weights.shape[2:]
    lens = batch["source_valid_lens"]
    cross_mask = (torch.arange(S) < lens[:, None, None, None]).expand(-1, 1, T, -1)
    assert (weights.masked_fill(cross_mask, 0) == 0).all()  # no weight where False
    assert torch.equal(cross_mask, masks.valid_lens_to_bool(lens, S).expand(-1, 1, T, -1))
    return tuple(weights.shape), cross_mask


ANSWERS = {ex1: stion_answers, ex2: projected_answers,  # see test_exercise_variants.py
           ex3: cross_mask_answers}

# d2lutil calls whose result a student might hand in (test_exercises_understanding.py):
# the weights' shape a forward pass returns (a part worth no points), and the letters'
# mask of masks.valid_lens_to_bool and of key padding, neither with the weights' axes
LIBRARY_CALLS = {ex3: [
    lambda words, phonemes=None: list(
        run(words)[1].decoder.cross_attention.attention_weights.shape),
    # not masks.valid_lens_to_bool(letter_lens, S): it makes the mask from the lengths the
    # student must choose (the letters', not the phonemes', nor a causal one), and that
    # choice is what the part assesses, as `torch.arange(S) < lens` would be
    lambda words, phonemes=None: masks.valid_lens_to_key_padding(
        torch.tensor([len(w) for w in words]), max(map(len, words)))]}


@pytest.mark.parametrize("exercise, i", [(exercise, i) for exercise in EXERCISES
                                         for i in range(len(exercise.variants))])
def test_the_hints_name_the_variants_values_not_its_answers(exercise, i):
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
