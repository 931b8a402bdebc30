"""The checks of notebook 08's exercises, against answers computed here by another route.

Exercise 1's counts come from the dictionary file read with plain string operations;
exercise 2's by counting, with a forward hook, the positions a real MultiHeadAttention
projects while it decodes with and without a KVCache; exercise 3's from an edit distance
written here as a memoised recursion (not d2lutil.pronunciations.edit_distance).
"""

import functools
import pathlib

import pytest
import torch

import d2lutil
from d2lutil import pronunciations
from d2lutil.exercises.nb08 import ex1, ex2, ex3


@pytest.fixture(scope="module")
def tion_counts():
    text = pathlib.Path(pronunciations.dictionary_path()).read_text(encoding="utf-8")
    ends = {}
    for line in text.splitlines():
        parts = line.split("#")[0].split()
        if not parts or not parts[0].endswith("tion") or not parts[0].isalpha():
            continue
        word = parts[0]
        if 3 <= len(word) <= 12 and word.islower() and word.isascii():
            ends.setdefault(word, [p.rstrip("012") for p in parts[1:]][-3:])
    return len(ends), sum(end == ["SH", "AH", "N"] for end in ends.values())


def test_ex1(tion_counts):
    num_tion, num_shan = tion_counts
    assert 0 < num_shan < num_tion
    assert ex1.check(num_tion, num_shan)
    assert not ex1.check(num_tion, num_tion)
    assert not ex1.check(num_tion + 1, num_shan)
    assert not ex1.check(..., num_shan)


def test_ex1_names_the_training_words_only(capsys):
    """822 and 807 are the counts over the training words of notebook 8."""
    every = pronunciations.load_dictionary(all_pronunciations=True)
    entries = {word: options[0] for word, options in every.items()}
    train_words, _, _ = pronunciations.split_words(entries, num_test=2_000, seed=0)
    tion = [word for word in train_words if word.endswith("tion")]
    shan = sum(entries[word][-3:] == ("SH", "AH", "N") for word in tion)
    assert not ex1.check(len(tion), shan)
    assert capsys.readouterr().out.count("training words only") == 2


def projected_positions(num_steps, use_cache):
    """Positions whose keys a causal self-attention projects over num_steps steps."""
    torch.manual_seed(0)
    layer = d2lutil.MultiHeadAttention(16, 4, query_size=16, key_size=16, value_size=16)
    seen = []
    layer.W_k.register_forward_hook(lambda module, inputs, output: seen.append(
        inputs[0].shape[1]))
    tokens = torch.randn(1, num_steps, 16)
    cache = d2lutil.KVCache()
    with torch.no_grad():
        for t in range(num_steps):
            if use_cache:
                x = tokens[:, t:t + 1]
                layer(x, x, x, cache=cache)
            else:
                prefix = tokens[:, :t + 1]
                layer(prefix, prefix, prefix, torch.arange(1, t + 2)[None])
    return sum(seen)


def test_ex2():
    without, with_cache = projected_positions(11, False), projected_positions(11, True)
    assert without > with_cache
    assert ex2.check(without, with_cache)
    assert not ex2.check(projected_positions(10, False), with_cache)
    assert not ex2.check(with_cache, without)


def levenshtein(a, b):
    @functools.cache
    def d(i, j):
        if i == 0 or j == 0:
            return i + j
        return min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))
    return d(len(a), len(b))


def test_ex3():
    model = tuple("AE T AH N T IY AH N".split())
    dictionary = tuple("AH T EH N SH AH N".split())
    distance = levenshtein(model, dictionary)
    assert ex3.check(distance, distance / len(dictionary))
    assert ex3.check(torch.tensor(distance), round(distance / len(dictionary), 3))
    assert not ex3.check(distance, distance / len(model))
    assert not ex3.check(distance + 1, (distance + 1) / len(dictionary))

