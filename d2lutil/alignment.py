"""Letters attending to letters: a toy alignment whose attention map can be read.

Each letter ``a`` to ``z`` gets one random vector drawn from N(0, I_d) (seeded,
shared by both words), a word becomes the stack of its letters' vectors, and a
query word attends to a key word through ``d2lutil.DotProductAttention``: raw
scaled dot products, no learned projections. A letter's vector has squared norm
about d, so its scaled score against itself is about sqrt(d), while two
different letters score about N(0, 1). That makes three kinds of row:

* ``"sharp"``: the letter occurs once in the key word and gets weight >= 0.8;
* ``"split"``: it occurs k >= 2 times and each copy gets >= 0.8 / k (>= 0.4 for
  two copies; the copies are identical keys, so their weights are equal up to
  float32 round-off);
* ``"diffuse"``: no key gets 0.5 or more (the letter usually has no partner);
* ``"unclear"``: none of the above.

Words are case-insensitive strings of the letters a to z.
"""

import math

import torch

from .attention import DotProductAttention
from .shapes import check_positive_int, check_seed

__all__ = [
    "ALPHABET",
    "SHARP_MIN",
    "SPLIT_TOTAL_MIN",
    "DIFFUSE_MAX",
    "letter_embeddings",
    "embed_word",
    "alignment_weights",
    "alignment_weights_over_seeds",
    "row_stats",
    "uniform_entropy",
    "expected_regime",
    "classify_row",
    "letter_table",
    "regimes_hold",
    "robustness_counts",
]

ALPHABET = "abcdefghijklmnopqrstuvwxyz"
#: a row is sharp when its letter's single copy gets at least this weight
SHARP_MIN = 0.8
#: a row is split when each of its letter's k copies gets at least SPLIT_TOTAL_MIN / k
SPLIT_TOTAL_MIN = 0.8
#: a row is diffuse when every weight is below this
DIFFUSE_MAX = 0.5


def _check_word(name, word):
    """Return ``word`` lower-cased after checking it is a non-empty string of letters a-z."""
    if not isinstance(word, str):
        raise TypeError(f"{name} must be a str, got {type(word).__name__}")
    if not word:
        raise ValueError(f"{name} must be a non-empty word, got ''")
    lowered = word.lower()
    bad = sorted({ch for ch in lowered if ch not in ALPHABET})
    if bad:
        raise ValueError(f"{name} must contain only the letters a-z, got {word!r} (bad: {bad})")
    return lowered


def letter_embeddings(d, seed=0):
    """One N(0, I_d) vector per letter, reproducible from ``seed``.

    Returns a float32 tensor of shape (26, d); row i belongs to ``ALPHABET[i]``.
    The draw uses its own ``torch.Generator``, so it leaves the global RNG alone.
    """
    check_positive_int("d", d)
    check_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(len(ALPHABET), d, generator=generator)


def embed_word(word, table):
    """The rows of ``table`` (26, d) for the letters of ``word``: shape (len(word), d)."""
    word = _check_word("word", word)
    if not isinstance(table, torch.Tensor):
        raise TypeError(f"table must be a torch.Tensor, got {type(table).__name__}")
    if table.dim() != 2 or table.shape[0] != len(ALPHABET):
        raise ValueError(f"table must have shape (26, d), got {tuple(table.shape)}")
    index = torch.tensor([ALPHABET.index(ch) for ch in word])
    return table[index]


def alignment_weights(query_word, key_word, d=64, seed=0):
    """Scaled dot-product attention of ``query_word``'s letters over ``key_word``'s.

    Both words are embedded with ``letter_embeddings(d, seed)``; the keys are
    also the values. Returns the weights, shape (len(query_word), len(key_word)),
    each row summing to 1.
    """
    return alignment_weights_over_seeds(query_word, key_word, d, [seed])[0]


def alignment_weights_over_seeds(query_word, key_word, d, seeds):
    """``alignment_weights`` for several seeds at once, as one batched attention call.

    Returns shape (len(seeds), len(query_word), len(key_word)); entry s equals
    ``alignment_weights(query_word, key_word, d, seeds[s])``.
    """
    query_word = _check_word("query_word", query_word)
    key_word = _check_word("key_word", key_word)
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    tables = [letter_embeddings(d, seed) for seed in seeds]
    # (num_seeds, num_queries, d) and (num_seeds, num_keys, d): one word pair per seed
    queries = torch.stack([embed_word(query_word, table) for table in tables])
    keys = torch.stack([embed_word(key_word, table) for table in tables])
    attention = DotProductAttention()
    attention(queries, keys, keys)
    return attention.attention_weights


def _check_weights(weights):
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"weights must be a torch.Tensor, got {type(weights).__name__}")
    if weights.dim() != 2 or weights.shape[1] == 0:
        raise ValueError(
            f"weights must be 2-D (num_queries, num_keys) with num_keys >= 1, "
            f"got shape {tuple(weights.shape)}"
        )


def row_stats(weights):
    """Per-row maximum weight and entropy in nats.

    weights: (num_queries, num_keys), each row a probability distribution.
    Returns two float64 tensors of shape (num_queries,): the largest weight of
    each row and its entropy -sum p ln p (0 ln 0 taken as 0), which lies
    between 0 (one-hot) and ln(num_keys) (uniform).
    """
    _check_weights(weights)
    p = weights.detach().to(torch.float64)
    if (p < 0).any():
        raise ValueError("weights must be non-negative")
    plogp = torch.where(p > 0, p * torch.log(p.clamp_min(1e-300)), torch.zeros_like(p))
    return p.max(dim=1).values, -plogp.sum(dim=1)


def expected_regime(letter, key_word):
    """What the letter counts predict: ``"diffuse"``, ``"sharp"`` or ``"split"``.

    ``letter`` is one letter; the prediction depends only on how many times it
    occurs in ``key_word`` (0, 1, or 2 and more).
    """
    letter = _check_word("letter", letter)
    if len(letter) != 1:
        raise ValueError(f"letter must be a single letter, got {letter!r}")
    count = _check_word("key_word", key_word).count(letter)
    return "diffuse" if count == 0 else "sharp" if count == 1 else "split"


def classify_row(row, copies):
    """The measured regime of one row of weights.

    row: (num_keys,) weights of one query letter.
    copies: the key positions that hold the same letter (a list of ints).
    Returns ``"sharp"`` (one copy, weight >= SHARP_MIN), ``"split"`` (k >= 2
    copies, each >= SPLIT_TOTAL_MIN / k), ``"diffuse"`` (every weight
    < DIFFUSE_MAX) or ``"unclear"``, checked in that order.
    """
    if not isinstance(row, torch.Tensor):
        raise TypeError(f"row must be a torch.Tensor, got {type(row).__name__}")
    if row.dim() != 1 or row.numel() == 0:
        raise ValueError(f"row must be 1-D (num_keys,) and non-empty, got {tuple(row.shape)}")
    copies = list(copies)
    if any(isinstance(c, bool) or not isinstance(c, int) for c in copies):
        raise TypeError(f"copies must be a list of int positions, got {copies!r}")
    if any(not 0 <= c < row.numel() for c in copies):
        raise ValueError(f"copies must be positions in [0, {row.numel()}), got {copies}")
    return _classify(row.tolist(), copies)


def _classify(row, copies):
    """``classify_row`` on a list of floats (no torch call: fast for many rows)."""
    weights = [row[c] for c in copies]
    if len(weights) == 1 and weights[0] >= SHARP_MIN:
        return "sharp"
    if len(weights) >= 2 and min(weights) >= SPLIT_TOTAL_MIN / len(weights):
        return "split"
    if max(row) < DIFFUSE_MAX:
        return "diffuse"
    return "unclear"


def letter_table(query_word, key_word, weights):
    """One entry per distinct letter of ``query_word``, in order of first appearance.

    weights: (len(query_word), len(key_word)). Each entry is a dict with keys
    ``letter``, ``copies`` (its number of occurrences in ``key_word``),
    ``max_weight``, ``entropy`` (nats), ``expected`` and ``regime`` (measured).
    """
    query_word = _check_word("query_word", query_word)
    key_word = _check_word("key_word", key_word)
    _check_weights(weights)
    if tuple(weights.shape) != (len(query_word), len(key_word)):
        raise ValueError(
            f"weights must have shape {(len(query_word), len(key_word))} "
            f"(len(query_word), len(key_word)), got {tuple(weights.shape)}"
        )
    if (weights < 0).any():
        raise ValueError("weights must be non-negative")
    # Plain Python floats from here on: a table is a handful of rows, and many
    # tiny torch calls cost more than the arithmetic.
    rows = weights.detach().to(torch.float64).tolist()
    table = []
    for letter in dict.fromkeys(query_word):
        row = rows[query_word.index(letter)]
        copies = [j for j, ch in enumerate(key_word) if ch == letter]
        table.append({
            "letter": letter,
            "copies": len(copies),
            "max_weight": max(row),
            "entropy": -sum(p * math.log(p) for p in row if p > 0),
            "expected": expected_regime(letter, key_word),
            "regime": _classify(row, copies),
        })
    return table


def regimes_hold(query_word, key_word, d=64, seed=0):
    """True when every letter of ``query_word`` shows the regime its counts predict."""
    weights = alignment_weights(query_word, key_word, d, seed)
    return all(row["regime"] == row["expected"]
               for row in letter_table(query_word, key_word, weights))


def robustness_counts(query_word, key_word, ds, seeds):
    """For each d in ``ds``: in how many of ``seeds`` all the regimes hold.

    Returns a dict {d: count}, each count between 0 and len(seeds).
    """
    ds, seeds = list(ds), list(seeds)
    if not ds:
        raise ValueError("ds must hold at least one dimension d")
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    for d in ds:
        check_positive_int("d", d)
    for seed in seeds:
        check_seed(seed)
    counts = {}
    for d in ds:
        weights = alignment_weights_over_seeds(query_word, key_word, d, seeds)
        counts[d] = sum(
            all(row["regime"] == row["expected"] for row in letter_table(query_word, key_word, w))
            for w in weights)
    return counts


def uniform_entropy(num_keys):
    """ln(num_keys), the entropy in nats of a uniform row over ``num_keys`` keys."""
    check_positive_int("num_keys", num_keys)
    return math.log(num_keys)
