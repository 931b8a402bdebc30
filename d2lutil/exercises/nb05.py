"""The exercises of notebook 05, "An Alignment You Can Read", with their checks.

``ex1``: "a" against "banana" (the weight of each copy, the regime);
``ex2``: the robustness counts at d = 128 and 256 and how often e's row is diffuse (the
explanation is open-ended); ``ex3``: e's row without the 1/sqrt(d) scaling (its largest
weight and the letter that gets it; what that says about sharp rows is open-ended).
The worked solutions are ``notebooks/solutions/05_solutions.ipynb``.

Every exercise has variants (issue 35): a student's letter, word, d and seed (exercise
1), range of seeds (exercise 2) and d and seed (exercise 3). Each variant's answers are
computed with d2lutil.alignment when its parts are built (``_ex1_parts``, ...: a few
milliseconds), from the seeds in force then, as the notebook computes them.

Points, on the chapter's scale: 1 for a look-up (a value read off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; several parts of one exercise may share its worth.
"""

import math

from .. import alignment
from ..attention import masked_softmax
from . import Exercise, distinct, number, numbers_close, public
from .checkers import word as word_of  # ``word`` is a value of exercise 1's variants

__all__ = ["ex1", "ex2", "ex3"]

REGIMES = ["sharp", "split", "diffuse", "unclear"]
TOL = 0.01  # the weights are read off a softmax: two decimals are enough


def _ex1_parts(letter, word, d, seed):
    row = alignment.alignment_weights(letter, word, d, seed)[0]
    copies = [j for j, ch in enumerate(word) if ch == letter]
    k, n = len(copies), len(word)
    mistakes = []
    if k > 1:
        mistakes.append(([1.0] * k, f"{k} identical copies get identical scores, so they "
                                    "share the weight"))
    if k > 2:
        mistakes.append(([1 / (k - 1)] * k, f"there are {k} copies of {letter} in {word}, "
                                            f"not {k - 1}"))
    mistakes.append(([1 / n] * k, f"1/{n} would be uniform over all {n} letters of {word}; "
                                  "the scores are not all equal"))
    if (d, seed) != (64, 0):
        defaults = alignment.alignment_weights(letter, word)[0]  # d = 64, seed 0
        mistakes.append((defaults[copies].tolist(), "that is the weight at d = 64, seed 0 "
                                                    "(alignment_weights' defaults): pass "
                                                    "your d and seed"))
    weights = row[copies].tolist()
    regime = alignment.classify_row(row, copies)
    return [("weight of each copy", numbers_close(
                weights, atol=TOL, read="one_or_each",
                mistakes=distinct(weights, mistakes, atol=2 * TOL))),
            ("regime", word_of(regime, REGIMES,
                               mistakes=_regime_mistakes(regime, letter, word)))]


def _regime_mistakes(regime, letter, word):
    """(wrong regime, what it would take): none says which regime is right."""
    k = word.count(letter)
    said = {
        "sharp": ("a sharp row puts nearly all its weight on one key" if k > 1 else
                  "a sharp row puts 0.8 or more of its weight on the letter's copy"),
        "split": (f"{letter} occurs once in {word}, and a split row needs two copies or "
                  "more" if k == 1 else f"a split row gives each of the {k} copies 0.8 / "
                  f"{k} or more"),
        "diffuse": ("no single key gets 0.5, but classify_row looks at the copies of the "
                    "letter together first" if regime == "split" else
                    "a diffuse row has every weight below 0.5"),
        "unclear": "the row fits one of the three named regimes",
    }
    return [(choice, said[choice]) for choice in REGIMES if choice != regime]


def _ex1_hints(letter, word, d, seed):
    k = word.count(letter)
    others = sorted(set(word) - {letter})
    others = " and ".join(others) if len(others) <= 2 else "the other letters"
    root = rf"$\sqrt{{d}} = {math.sqrt(d):.3g}$"
    if k > 1:
        same = (f"The {k} {letter}'s of {word} are the same vector, so they get the same "
                rf"score, about {root}; {others} score about $\mathcal{{N}}(0, 1)$. What "
                f"does softmax do with {k} equal, much larger scores?")
        copies = f"the positions of the {letter}'s"
    else:
        same = (f"The {letter} of {word} is the query's own vector, so it scores about "
                f"{root} (give or take, at a small $d$); {others} score about "
                r"$\mathcal{N}(0, 1)$. How far above them is that at your $d$?")
        copies = f"the position of the {letter}, in a list"
    return [
        same,
        f"`weights = alignment.alignment_weights(\"{letter}\", \"{word}\", d={d}, "
        f"seed={seed})`, then `alignment.classify_row(weights[0], copies)` with `copies` "
        f"{copies}.",
    ]


ex1 = Exercise(
    1,
    _ex1_parts,
    answers=("copy_weight", "row_regime"),
    hints=_ex1_hints,
    solution=(
        "The copies are identical keys, so each gets the same weight, just under a "
        "third: 0.333 each at $d = 64$, seed 0. Three copies each above $0.8 / 3 = "
        "0.267$ make the row \"split\". See `solutions/05_solutions.ipynb`."),
    # the weight: a computation (2); the regime: a look-up with classify_row (1)
    points=[2, 1],
    # the book's "a" against "banana" first (split); the others a letter that occurs
    # once, whose regime is sharp, unclear or diffuse, never split, and whose weight is
    # no number the lesson prints (tests/exercises/test_exercises_understanding.py)
    variants=[
        {"letter": "a", "word": "banana", "d": 64, "seed": 0},
        {"letter": "b", "word": "banana", "d": 16, "seed": 2},         # sharp
        {"letter": "a", "word": "attention", "d": 8, "seed": 0},       # unclear
        {"letter": "r", "word": "translation", "d": 8, "seed": 0},     # diffuse
        {"letter": "l", "word": "translation", "d": 32, "seed": 1},    # sharp
        {"letter": "r", "word": "translation", "d": 12, "seed": 4},    # unclear
        {"letter": "o", "word": "attention", "d": 16, "seed": 2},      # sharp
        {"letter": "s", "word": "translation", "d": 12, "seed": 1},    # unclear
        {"letter": "b", "word": "banana", "d": 8, "seed": 2},          # diffuse
        {"letter": "i", "word": "attention", "d": 8, "seed": 2},        # unclear
        {"letter": "l", "word": "translation", "d": 8, "seed": 3},     # diffuse
    ],
)

_PAIR = ("attention", "translation")
_WIDTHS = [128, 256]


def _ex2_parts(first_seed, last_seed):
    seeds = range(first_seed, last_seed + 1)
    counts = alignment.robustness_counts(*_PAIR, _WIDTHS, seeds)
    expected = [counts[d] for d in _WIDTHS]
    mistakes = [([len(seeds)] * 2, "not every seed passes at both widths: count the seeds "
                                   "for which all letters show their regime")]
    if expected[0] != expected[1]:
        mistakes.append(([expected[0]] * 2, f"at d = {_WIDTHS[1]} the count is not the "
                                            f"same as at d = {_WIDTHS[0]}"))
    if first_seed != 0:
        book = alignment.robustness_counts(*_PAIR, _WIDTHS, range(20))
        mistakes.append(([book[d] for d in _WIDTHS], "those are the counts of seeds 0 to "
                                                     "19, the book's: count seeds "
                                                     f"{first_seed} to {last_seed}"))
    return [("robustness counts at d = 128 and 256", numbers_close(
                expected, keys=_WIDTHS, mistakes=distinct(expected, mistakes, rtol=2e-6))),
            ("share of seeds with e's row diffuse, d = 16 and d = 256",
             public.diffuse_shares_checker())]


def _range(start, stop):
    return f"range({stop})" if start == 0 else f"range({start}, {stop})"


def _ex2_hints(first_seed, last_seed):
    return [
        "`alignment.robustness_counts(\"attention\", \"translation\", [128, 256], "
        f"{_range(first_seed, last_seed + 1)})` gives the counts. For e's row use "
        "`alignment.alignment_weights_over_seeds(\"e\", \"translation\", d, range(400))` "
        "and count rows whose largest weight is below `alignment.DIFFUSE_MAX`.",
        r"With the $1/\sqrt{d}$ scaling, the score of two different letters has variance "
        "1 at every $d$. e has no partner in translation: does its row change with $d$?",
    ]


ex2 = Exercise(
    2,
    _ex2_parts,
    answers=("robust_counts", "e_diffuse_shares"),
    hints=_ex2_hints,
    solution=(
        "The counts are 17 of 20 at $d = 128$ and 20 of 20 at $d = 256$ (seeds 0 to 19), "
        "but they do not settle at 20: e's row is diffuse for 378 of 400 seeds at $d = "
        "16$ and 384 of 400 at $d = 256$, about 95 % at both. Scaled scores of different "
        "letters have variance 1 whatever $d$ is, so e's row has the same distribution "
        "at every $d$, and 20 seeds all diffuse is roughly a coin flip ($0.96^{20}$, "
        "about 0.44). More dimensions make the sharp and split rows reliable, not the "
        "diffuse ones. See `solutions/05_solutions.ipynb`."),
    open_part="the explanation with e's row",
    # the counts: a computation (2); the shares over a few hundred seeds: a computation (2)
    points=[2, 2],
    rubric=[
        (2, "explains that scaled scores of different letters have variance 1 at every "
            "d, so e's row, which has no partner in translation, has the same "
            "distribution whatever d is"),
        (1, "concludes that more dimensions make the sharp and split rows reliable, not "
            "the diffuse ones, so the count need not settle at 20 (twenty diffuse rows "
            "in a row are about a coin flip)"),
    ],
    # the book's seeds 0 to 19 first; every other block of 20 seeds counts otherwise
    variants=[{"first_seed": 0, "last_seed": 19}, {"first_seed": 40, "last_seed": 59},
              {"first_seed": 120, "last_seed": 139}, {"first_seed": 240, "last_seed": 259},
              {"first_seed": 320, "last_seed": 339}, {"first_seed": 380, "last_seed": 399},
              {"first_seed": 60, "last_seed": 79}, {"first_seed": 100, "last_seed": 119},
              {"first_seed": 140, "last_seed": 159}, {"first_seed": 180, "last_seed": 199},
              {"first_seed": 260, "last_seed": 279}],
    open_book={1: "a share over a few hundred seeds the student picks: any share in the "
                  "band the distribution of e's row gives (0.9 to 0.99 at both widths, "
                  "close to each other) is right, the same band for everyone, so its "
                  "checker tests the band (a custom checker) and holds no single value"},
)


def _e_rows(d, seed):
    """e's row of "attention" against "translation": (unscaled, scaled)."""
    table = alignment.letter_embeddings(d, seed)
    queries, keys = (alignment.embed_word(w, table) for w in _PAIR)
    scores = (queries @ keys.T)[None]  # (1, 9, 11)
    e = _PAIR[0].index("e")
    return masked_softmax(scores)[0, e], masked_softmax(scores / math.sqrt(d))[0, e]


def _ex3_parts(d, seed):
    unscaled, scaled = _e_rows(d, seed)
    largest, letter = unscaled.max().item(), _PAIR[1][unscaled.argmax().item()]
    weight_mistakes = [(scaled.max().item(),
                        "that is e's row with the 1/sqrt(d) scaling; drop it")]
    letter_mistakes = [("e", "e does not occur in translation")]
    if (d, seed) != (64, 0):
        book, _ = _e_rows(64, 0)
        said = "that is e's row at d = 64, seed 0, the book's: use your d and seed"
        weight_mistakes.append((book.max().item(), said))
        book_letter = _PAIR[1][book.argmax().item()]
        if book_letter != letter:
            letter_mistakes.append((book_letter, said.replace("row", "top letter", 1)))
    return [("largest weight in e's row without scaling", number(
                largest, atol=TOL, mistakes=[(float(v), m) for v, m in distinct(
                    largest, weight_mistakes, atol=2 * TOL)])),
            ("letter that gets it", word_of(letter, sorted(set(_PAIR[1])) + ["e"],
                                         mistakes=letter_mistakes))]


def _ex3_hints(d, seed):
    return [
        f"Take `table = alignment.letter_embeddings({d}, {seed})`, embed both words with "
        "`alignment.embed_word`, and apply `masked_softmax` to `(queries @ "
        r"keys.T)[None]`, without dividing by $\sqrt{d}$.",
        "e is letter 4 of attention (index `\"attention\".index(\"e\")`). Look at the "
        "largest weight of its row and at which letter of translation it sits on.",
    ]


ex3 = Exercise(
    3,
    _ex3_parts,
    answers=("largest_weight", "top_letter"),
    hints=_ex3_hints,
    solution=(
        r"Without the scaling the scores are $\sqrt{d} = 8$ times larger and softmax is "
        "far more peaked: e's row puts 0.94 of its weight on the letter i, although e "
        "does not occur in translation (`classify_row` calls it unclear). A sharp row is "
        "therefore no proof of relevance: how sharp a softmax is depends on the scale of "
        "the scores as much as on what matches. See `solutions/05_solutions.ipynb`."),
    open_part="what this says about reading a sharp row",
    # the largest weight: a computation (2); the letter: read off the same row (1)
    points=[2, 1],
    rubric=[
        (2, "says a sharp row is no proof of relevance: e does not occur in "
            "translation, yet one letter takes most of its weight"),
        (1, "puts the sharpness down to the scale of the scores (sqrt(d) times larger "
            "without the scaling), not to a match"),
    ],
    # the book's d = 64, seed 0 first (0.94 on i); each other row peaks on another
    # letter, and unscaled it is as sharp as a real match
    variants=[{"d": 64, "seed": 0}, {"d": 48, "seed": 4}, {"d": 48, "seed": 1},
              {"d": 96, "seed": 6}, {"d": 128, "seed": 3}, {"d": 48, "seed": 11},
              {"d": 48, "seed": 16}, {"d": 80, "seed": 0}, {"d": 80, "seed": 12},
              {"d": 96, "seed": 1}, {"d": 96, "seed": 13}],
)
