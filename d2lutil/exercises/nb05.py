"""The exercises of notebook 05, "An Alignment You Can Read", with their checks.

``ex1``: "a" against "banana" (the weight of each copy, the regime);
``ex2``: the robustness counts at d = 128 and 256 and how often e's row is diffuse (the
explanation is open-ended); ``ex3``: e's row without the 1/sqrt(d) scaling (its largest
weight and the letter that gets it; what that says about sharp rows is open-ended).
The worked solutions are ``notebooks/solutions/05_solutions.ipynb``.

Points, on the chapter's scale: 1 for a look-up (a value read off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; several parts of one exercise may share its worth.
"""

from . import Exercise, Wrong, as_array, number, numbers_close, word
from .checkers import around

__all__ = ["ex1", "ex2", "ex3"]

REGIMES = ["sharp", "split", "diffuse", "unclear"]

_share = number(1 / 3, atol=0.01, mistakes=[
    (1.0, "three identical copies get identical scores, so they share the weight"),
    (0.5, "there are three copies of a in banana, not two"),
    (1 / 6, "1/6 would be uniform over all six letters; the a's score far above b and n")])


@around(_share)
def _copy_weights(answer):
    weights = as_array(answer).ravel()
    if weights.size not in (1, 3):
        raise Wrong(f"give one number (the weight of each copy) or three (one per copy), got "
                    f"{weights.size}")
    for weight in weights:
        _share(float(weight))


ex1 = Exercise(
    1,
    [("weight of each copy", _copy_weights),
     ("regime", word("split", REGIMES, mistakes=[
         ("sharp", "a sharp row puts nearly all its weight on one key"),
         ("diffuse", "no single key gets 0.5, but classify_row looks at the copies of the "
                     "letter together first"),
         ("unclear", "the row fits one of the three named regimes")]))],
    hints=[
        "The three a's of banana are the same vector, so they get the same score, about "
        r"$\sqrt{d} = 8$; b and n score about $\mathcal{N}(0, 1)$. What does softmax do "
        "with three equal, much larger scores?",
        "`weights = alignment.alignment_weights(\"a\", \"banana\", d=64, seed=0)`, then "
        "`alignment.classify_row(weights[0], copies)` with `copies` the positions of the "
        "a's.",
    ],
    solution=(
        "The copies are identical keys, so each gets the same weight, just under a "
        "third: 0.333 each at $d = 64$, seed 0. Three copies each above $0.8 / 3 = "
        "0.267$ make the row \"split\". See `solutions/05_solutions.ipynb`."),
    # the weight: a computation (2); the regime: a look-up with classify_row (1)
    points=[2, 1],
)


def _counts(answer):
    """The counts of seeds 0 to 19, computed here when checking: the asked seeds are
    the answer's (a notebook run with other seeds asks, and checks, for those)."""
    from d2lutil import alignment  # torch only when checking: the import stays light

    counts = alignment.robustness_counts("attention", "translation", [128, 256], range(20))
    expected = [counts[128], counts[256]]
    mistakes = []
    if expected != [20, 20]:
        mistakes.append(([20, 20], "not every seed passes at both widths: count the seeds "
                                   "for which all letters show their regime"))
    if expected[0] != expected[1]:
        mistakes.append(([expected[0]] * 2,
                         "at d = 256 the count is not the same as at d = 128"))
    numbers_close(expected, keys=[128, 256], mistakes=mistakes)(answer)


def _diffuse_shares(answer):
    shares = as_array(answer).ravel()
    if shares.size != 2:
        raise Wrong(f"expected two shares (d = 16 and d = 256), got {shares.size} numbers")
    if (shares > 1).any() or (shares < 0).any():
        raise Wrong("give shares between 0 and 1: the number of diffuse rows divided by the "
                    "number of seeds")
    if (shares > 0.995).any():
        raise Wrong("with a few hundred seeds some of e's rows are not diffuse: use more "
                    "seeds")
    for d, share in zip((16, 256), shares, strict=True):
        if not 0.9 <= share <= 0.99:
            raise Wrong(f"the share at d = {d} is not right")
    if abs(shares[0] - shares[1]) > 0.06:
        raise Wrong("the two shares differ by more than sampling noise explains")


ex2 = Exercise(
    2,
    [("robustness counts at d = 128 and 256", _counts),
     ("share of seeds with e's row diffuse, d = 16 and d = 256", _diffuse_shares)],
    hints=[
        "`alignment.robustness_counts(\"attention\", \"translation\", [128, 256], "
        "range(20))` gives the counts. For e's row use "
        "`alignment.alignment_weights_over_seeds(\"e\", \"translation\", d, range(400))` "
        "and count rows whose largest weight is below `alignment.DIFFUSE_MAX`.",
        r"With the $1/\sqrt{d}$ scaling, the score of two different letters has variance "
        "1 at every $d$. e has no partner in translation: does its row change with $d$?",
    ],
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
)

def _e_rows():
    """e's row of "attention" against "translation" at d = 64, seed 0: (unscaled,
    scaled), computed when checking, as the exercise asks (see _counts)."""
    from d2lutil import alignment, masked_softmax

    table = alignment.letter_embeddings(64, 0)
    queries = alignment.embed_word("attention", table)
    keys = alignment.embed_word("translation", table)
    scores = (queries @ keys.T)[None]  # (1, 9, 11)
    e = "attention".index("e")
    return masked_softmax(scores)[0, e], masked_softmax(scores / 8)[0, e]


def _largest_weight(answer):
    unscaled, scaled = _e_rows()
    number(unscaled.max().item(), atol=0.01, mistakes=[
        (scaled.max().item(), "that is e's row with the 1/sqrt(d) scaling; drop it")])(answer)


def _top_letter(answer):
    unscaled, _ = _e_rows()
    letter = "translation"[unscaled.argmax().item()]
    word(letter, sorted(set("translation")) + ["e"], mistakes=[
        ("e", "e does not occur in translation")])(answer)


ex3 = Exercise(
    3,
    [("largest weight in e's row without scaling", _largest_weight),
     ("letter that gets it", _top_letter)],
    hints=[
        "Take `table = alignment.letter_embeddings(64, 0)`, embed both words with "
        "`alignment.embed_word`, and apply `masked_softmax` to `(queries @ "
        r"keys.T)[None]`, without dividing by $\sqrt{d}$.",
        "e is letter 4 of attention (index `\"attention\".index(\"e\")`). Look at the "
        "largest weight of its row and at which letter of translation it sits on.",
    ],
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
)
