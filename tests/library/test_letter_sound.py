"""Tests of d2lutil.letter_sound: the EM aligner against alignments made by hand.

The hand alignments say, for each phoneme of a word, which letters may spell it (a
silent letter may join the chunk of a neighbour, so the allowed set can hold it too);
every phoneme's aligned letters must lie in its set and include its core letter.
"""

import numpy as np
import pytest

from d2lutil import letter_sound, pronunciations

# word: one entry per phoneme, "core letters/allowed letters" as letter positions
HAND = {
    "knight": ["1/01", "2/234", "5/345"],  # silent k, gh; N AY T
    "box": ["0/0", "1/1", "2/2", "2/2"],  # x -> K S
    "taxi": ["0/0", "1/1", "2/2", "2/2", "3/3"],
    "letter": ["0/0", "1/1", "2/23", "4/45"],  # tt -> one T
    "nation": ["0/0", "1/1", "2/23", "4/34", "5/5"],  # -tion -> SH AH N
    "action": ["0/0", "1/1", "2/23", "4/34", "5/5"],
    "lamb": ["0/0", "1/1", "2/23"],  # silent b
    "write": ["1/01", "2/2", "3/34"],  # silent w and e
    "phone": ["0/01", "2/2", "3/34"],  # ph -> F
    "ship": ["0/01", "2/2", "3/3"],  # sh -> SH
    "rate": ["0/0", "1/1", "2/23"],  # the silent e
    "cell": ["0/0", "1/1", "2/23"],  # soft c, ll -> L
    "attention": ["0/0", "1/12", "3/3", "4/4", "5/56", "7/67", "8/8"],
}


def positions(text):
    return {int(c) for c in text}


@pytest.fixture(scope="module")
def entries():
    return pronunciations.load_dictionary()


@pytest.fixture(scope="module")
def aligner(entries):
    words = sorted(entries)[::11]  # about 10,000 words: a few seconds
    return letter_sound.fit([(w, entries[w]) for w in words])


def test_fit_converges_and_raises_the_likelihood(aligner):
    assert aligner.converged and aligner.iterations < 50
    history = np.array(aligner.log_likelihoods)
    assert (np.diff(history) >= -1e-9).all()  # EM never lowers the likelihood
    assert history[-1] > history[0]
    assert abs(sum(aligner.probabilities.values()) - 1) < 1e-9


@pytest.mark.parametrize("word", sorted(HAND))
def test_alignment_matches_the_hand_alignment(aligner, entries, word):
    (spans,) = aligner.phoneme_spans([word], [entries[word]])
    assert len(spans) == len(entries[word]) == len(HAND[word])
    for (start, end), hand in zip(spans, HAND[word], strict=True):
        core, allowed = (positions(part) for part in hand.split("/"))
        aligned = set(range(start, end))
        assert core <= aligned <= allowed, (word, entries[word], spans)


def test_chunks_spell_the_word_and_the_pronunciation(aligner, entries):
    words = sorted(entries)[5::997]
    for word, chunks in zip(words, aligner.align(words, [entries[w] for w in words]),
                            strict=True):
        if chunks is None:
            continue
        assert "".join(letters for letters, _ in chunks) == word
        assert sum((p for _, p in chunks), ()) == entries[word]
        assert all((len(c), len(p)) in letter_sound.CHUNK_KINDS for c, p in chunks)


def test_same_words_same_aligner(entries):
    words = sorted(entries)[::200]
    pairs = [(w, entries[w]) for w in words]
    first, second = letter_sound.fit(pairs), letter_sound.fit(list(reversed(pairs)))
    assert first.probabilities.keys() == second.probabilities.keys()
    for chunk, p in first.probabilities.items():
        assert abs(p - second.probabilities[chunk]) < 1e-9


def test_a_word_no_chunk_spells_is_none(aligner):
    # three letters cannot spell seven phonemes (at most two per letter)
    assert aligner.align(["cat"], [("K",) * 7]) == [None]
    assert aligner.phoneme_spans(["cat"], [("K",) * 7]) == [None]


def test_spans_of_hand_chunks():
    chunks = [("b", ("B",)), ("o", ("AA",)), ("x", ("K", "S"))]
    assert letter_sound.spans_of(chunks) == [(0, 1), (1, 2), (2, 3), (2, 3)]
    assert letter_sound.spans_of([("k", ()), ("n", ("N",))]) == [(1, 2)]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="pairs"):
        letter_sound.fit([])
    with pytest.raises(ValueError, match="max_iterations"):
        letter_sound.fit([("cat", ("K", "AE", "T"))], max_iterations=0)
    with pytest.raises(ValueError, match="tolerance"):
        letter_sound.fit([("cat", ("K", "AE", "T"))], tolerance=0)
    with pytest.raises(ValueError, match="pairs"):
        letter_sound.fit([("cat", (1, 2))])
