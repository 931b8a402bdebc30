"""Which letters spell which phonemes: a letter-to-phoneme aligner fitted by EM.

An alignment of a word with its pronunciation cuts both into the same number of
*chunks* and pairs them in order. A chunk pairs one or two letters with zero, one or
two phonemes, of the kinds in ``CHUNK_KINDS``: a silent letter (``k`` of "knee":
one letter, no phoneme), one letter for one phoneme, one letter for two (``x`` as
``K S``) and two letters for one (``sh`` as ``SH``, ``tt`` as ``T``). This is the
many-to-many alignment of Jiampojamarn, Kondrak and Sherif (2007), restricted to
these four kinds.

``fit`` learns a probability for every chunk seen in the data by expectation
maximisation: the probability of a word's alignment is the product of its chunks'
probabilities; the E step sums over every alignment of every word (a forward and a
backward pass over the grid of letters by phonemes, all words at once in NumPy), the
M step sets each chunk's probability to its expected count over the total. Fitting
stops when the mean log-likelihood per word improves by less than ``tolerance``
(relative), or after ``max_iterations``. It draws nothing at random: the same words
give the same aligner, every run.

``LetterSoundAligner.align`` gives each word's most probable alignment (Viterbi) as
a list of chunks, and ``phoneme_spans`` the letters each phoneme is spelled by, as
``(start, end)`` letter positions (``end`` excluded).
"""

import numpy as np

__all__ = ["CHUNK_KINDS", "LetterSoundAligner", "fit", "spans_of"]

#: (letters, phonemes) per chunk: a silent letter, one-to-one, one-to-two, two-to-one
CHUNK_KINDS = ((1, 0), (1, 1), (1, 2), (2, 1))


def _check_pairs(pairs):
    pairs = [(w, tuple(p)) for w, p in pairs]
    if not pairs:
        raise ValueError("pairs must hold at least one (word, phonemes) pair")
    for word, phonemes in pairs:
        if not isinstance(word, str) or not word:
            raise ValueError(f"pairs: each word must be a non-empty str, got {word!r}")
        if not all(isinstance(p, str) for p in phonemes):
            raise ValueError(f"pairs: the phonemes of {word!r} must be str, got {phonemes!r}")
    return pairs


class _Grid:
    """The chunk codes of a list of (word, phonemes) pairs, for every kind of chunk
    ending at every point (i letters, j phonemes) of each word's grid."""

    def __init__(self, pairs, phoneme_ids):
        self.pairs = pairs
        W = len(pairs)
        self.num_letters = np.array([len(w) for w, _ in pairs])
        self.num_phonemes = np.array([len(p) for _, p in pairs])
        L, P = self.num_letters.max(), self.num_phonemes.max()
        # (W, L) and (W, P): 1-based ids, 0 for padding
        letters = np.zeros((W, L), dtype=np.int64)
        sounds = np.zeros((W, P), dtype=np.int64)
        for n, (word, phonemes) in enumerate(pairs):
            letters[n, :len(word)] = [ord(c) - 31 for c in word]  # 1..95 for ASCII
            sounds[n, :len(phonemes)] = [phoneme_ids.setdefault(p, len(phoneme_ids) + 1)
                                         for p in phonemes]
        base = len(phoneme_ids) + 1
        self.codes = []  # per kind: (W, L + 1, P + 1) int64 code, -1 where impossible
        i = np.arange(L + 1)[None, :, None]
        j = np.arange(P + 1)[None, None, :]
        inside = (i <= self.num_letters[:, None, None]) & (j <= self.num_phonemes[:, None, None])
        for kind, (a, b) in enumerate(CHUNK_KINDS):
            # the code: kind, then the letters i - a, ..., i - 1 (base 96), then the
            # phonemes j - b, ..., j - 1 (base len(phoneme_ids) + 1), at fixed widths
            letter_code = np.zeros((W, L + 1, 1), dtype=np.int64)
            for k in range(a):
                column = np.zeros((W, L + 1), dtype=np.int64)
                column[:, a:] = letters[:, k:L - a + k + 1]
                letter_code = letter_code * 96 + column[:, :, None]
            sound_code = np.zeros((W, 1, P + 1), dtype=np.int64)
            for k in range(b):
                row = np.zeros((W, P + 1), dtype=np.int64)
                row[:, b:] = sounds[:, k:P - b + k + 1]
                sound_code = sound_code * base + row[:, None, :]
            code = (kind * 96 ** 2 + letter_code) * base ** 2 + sound_code
            possible = inside & (i >= a) & (j >= b)
            self.codes.append(np.where(possible, code, -1))


def _shifted(X, a, b):
    """X[:, i - a, j - b] at (i, j), zero where i < a or j < b: (W, I, J)."""
    out = np.zeros_like(X)
    out[:, a:, b:] = X[:, :X.shape[1] - a, :X.shape[2] - b]
    return out


def _row_before(X, i, a, b):
    """X[:, i - a, j - b] for every j of row i, zero where i < a or j < b: (W, J)."""
    out = np.zeros((X.shape[0], X.shape[2]))
    if i >= a:
        out[:, b:] = X[:, i - a, :X.shape[2] - b]
    return out


class LetterSoundAligner:
    """Chunk probabilities learned by ``fit``; ``align`` and ``phoneme_spans`` use them.

    Attributes: ``probabilities`` {(letters, phonemes): probability}, with letters a
    str and phonemes a tuple; ``iterations``, the EM steps taken; ``log_likelihoods``,
    the mean log-likelihood per alignable word after each step; ``converged``.
    """

    def __init__(self, probabilities, iterations, log_likelihoods, converged):
        self.probabilities = probabilities
        self.iterations = iterations
        self.log_likelihoods = log_likelihoods
        self.converged = converged

    def __repr__(self):
        return (f"LetterSoundAligner({len(self.probabilities)} chunks, "
                f"{self.iterations} EM steps, converged={self.converged})")

    def align(self, words, pronunciations):
        """The most probable alignment of each word: a list of (letters, phonemes)
        chunks, or None when no alignment of the known chunks spells the word. Tied
        alignments (the same chunks in another order) are told apart by ``CHUNK_KINDS``'
        order, from the last chunk back, never by round-off: "kk" spoken K is k:K k:-."""
        pairs = _check_pairs(zip(words, pronunciations, strict=True))
        phoneme_ids = {}
        grid = _Grid(pairs, phoneme_ids)
        known = {}
        for (letters, phonemes), p in self.probabilities.items():
            code = _code(letters, phonemes, phoneme_ids)
            if code is not None:
                known[code] = p
        codes = np.array(sorted(known), dtype=np.int64)
        table = np.array([known[c] for c in codes] + [0.0])
        scores = []  # per kind: (W, L + 1, P + 1) chunk probabilities
        for code in grid.codes:
            at = np.searchsorted(codes, code).clip(max=len(codes) - 1)
            scores.append(np.where(codes[at] == code, table[at], 0.0))
        best = np.zeros(grid.codes[0].shape)
        best[:, 0, 0] = 1.0
        choice = np.full(best.shape, -1)
        for i in range(1, best.shape[1]):
            candidates = np.stack([_row_before(best, i, a, b) * scores[k][:, i]
                                   for k, (a, b) in enumerate(CHUNK_KINDS)])
            best[:, i] = candidates.max(axis=0)
            # Two alignments of the same chunks in another order (k:K k:- and k:- k:K
            # for the kk of "dekker") tie; which product rounds larger depends on the
            # probabilities' last bits, which another NumPy version fits differently. Of
            # the kinds within a relative 1e-9 of the best, take the first (the first k
            # speaks); the smallest gap between alignments that do not tie is far larger.
            choice[:, i] = (candidates >= best[:, i] * (1 - 1e-9)).argmax(axis=0)
        alignments = []
        for n, (word, phonemes) in enumerate(pairs):
            i, j = len(word), len(phonemes)
            if best[n, i, j] == 0:
                alignments.append(None)
                continue
            chunks = []
            while i > 0:
                a, b = CHUNK_KINDS[choice[n, i, j]]
                chunks.append((word[i - a:i], phonemes[j - b:j]))
                i, j = i - a, j - b
            alignments.append(chunks[::-1])
        return alignments

    def phoneme_spans(self, words, pronunciations):
        """Per word, per phoneme, the (start, end) letters that spell it (None for a
        word that cannot be aligned)."""
        return [None if chunks is None else spans_of(chunks)
                for chunks in self.align(words, pronunciations)]


def _code(letters, phonemes, phoneme_ids):
    """The code ``_Grid`` gives the chunk (letters, phonemes), or None if one of its
    phonemes is not in ``phoneme_ids``."""
    if any(p not in phoneme_ids for p in phonemes):
        return None
    base = len(phoneme_ids) + 1
    letter_code = sound_code = 0
    for c in letters:
        letter_code = letter_code * 96 + ord(c) - 31
    for p in phonemes:
        sound_code = sound_code * base + phoneme_ids[p]
    kind = CHUNK_KINDS.index((len(letters), len(phonemes)))
    return (kind * 96 ** 2 + letter_code) * base ** 2 + sound_code


def _decode(code, phoneme_ids):
    """The (letters, phonemes) chunk of a code made by ``_Grid``."""
    names = {i: p for p, i in phoneme_ids.items()}
    base = len(phoneme_ids) + 1
    rest, sound_code = divmod(code, base ** 2)
    kind, letter_code = divmod(rest, 96 ** 2)
    a, b = CHUNK_KINDS[kind]
    letters = [chr(letter_code // 96 ** k % 96 + 31) for k in range(a - 1, -1, -1)]
    phonemes = [names[sound_code // base ** k % base] for k in range(b - 1, -1, -1)]
    return "".join(letters), tuple(phonemes)


def spans_of(chunks):
    """The (start, end) letter span of each phoneme of an alignment (a list of
    (letters, phonemes) chunks): the letters of the chunk it belongs to."""
    spans, start = [], 0
    for letters, phonemes in chunks:
        spans += [(start, start + len(letters))] * len(phonemes)
        start += len(letters)
    return spans


def fit(pairs, max_iterations=50, tolerance=1e-4):
    """Fit chunk probabilities by EM on ``pairs``, an iterable of (word, phonemes).

    Each word is a str, each pronunciation a sequence of phoneme str. Starts from
    equal probabilities for every chunk that occurs in some alignment; stops when
    the mean log-likelihood per alignable word rises by less than ``tolerance``
    times its size, or after ``max_iterations`` steps. Returns a LetterSoundAligner.
    """
    pairs = _check_pairs(pairs)
    if not isinstance(max_iterations, int) or max_iterations < 1:
        raise ValueError(f"max_iterations must be a positive int, got {max_iterations!r}")
    if not tolerance > 0:
        raise ValueError(f"tolerance must be positive, got {tolerance!r}")
    phoneme_ids = {}
    grid = _Grid(pairs, phoneme_ids)
    valid = np.concatenate([c[c >= 0] for c in grid.codes])
    chunk_codes = np.unique(valid)
    # per kind, the grid points (flat) where such a chunk can end, and its chunk id
    where = [np.flatnonzero(c >= 0) for c in grid.codes]
    ids = [np.searchsorted(chunk_codes, c.ravel()[w])
           for c, w in zip(grid.codes, where, strict=True)]
    shape = grid.codes[0].shape  # (W, L + 1, P + 1)
    word_of = [w // (shape[1] * shape[2]) for w in where]
    theta = np.full(len(chunk_codes), 1.0 / len(chunk_codes))
    W = len(pairs)
    ends = (np.arange(W), grid.num_letters, grid.num_phonemes)
    history, converged = [], False
    for _ in range(max_iterations):
        scores = []  # per kind: (W, L + 1, P + 1) chunk probabilities, 0 if impossible
        for w, i in zip(where, ids, strict=True):
            score = np.zeros(shape[0] * shape[1] * shape[2])
            score[w] = theta[i]
            scores.append(score.reshape(shape))
        alpha = np.zeros(shape)
        alpha[:, 0, 0] = 1.0
        for i in range(1, shape[1]):
            alpha[:, i] = sum(_row_before(alpha, i, a, b) * scores[k][:, i]
                              for k, (a, b) in enumerate(CHUNK_KINDS))
        beta = np.zeros(shape)
        beta[ends] = 1.0
        for i in range(shape[1] - 2, -1, -1):
            for k, (a, b) in enumerate(CHUNK_KINDS):
                if i + a < shape[1]:
                    # the chunk (a, b) from (i, j) to (i + a, j + b)
                    after = scores[k][:, i + a, b:] * beta[:, i + a, b:]
                    beta[:, i, :shape[2] - b] += after
        Z = alpha[ends]  # (W,) the summed probability of each word's alignments
        alignable = Z > 0
        inverse = np.where(alignable, 1.0 / np.where(alignable, Z, 1.0), 0.0)
        counts = np.zeros_like(theta)
        for k, (a, b) in enumerate(CHUNK_KINDS):
            post = (_shifted(alpha, a, b).ravel()[where[k]] * theta[ids[k]]
                    * beta.ravel()[where[k]] * inverse[word_of[k]])
            counts += np.bincount(ids[k], weights=post, minlength=len(theta))
        theta = counts / counts.sum()
        history.append(float(np.log(Z[alignable]).mean()))
        if len(history) > 1 and history[-1] - history[-2] < tolerance * abs(history[-2]):
            converged = True
            break
    probabilities = {}
    for code, p in zip(chunk_codes, theta, strict=True):
        if p > 0:
            probabilities[_decode(int(code), phoneme_ids)] = float(p)
    return LetterSoundAligner(probabilities, len(history), history, converged)
