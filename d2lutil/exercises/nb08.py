"""The exercises of notebook 08, "Spelling to Sound", with their checks.

``ex1``: the row of a -stion word said ``S CH AH N`` ("question" in the book) that
predicts ``CH``: how many keys its causal self-attention sees and how many its
cross-attention sees, and which letter, counted from the t, decides ``CH`` over ``SH``
(where a head would have to look for it, and why the model need not, is open-ended);
``ex2``: the token positions whose keys and values the decoder's self-attention projects
while greedy decoding pronounces a word of ``num_phonemes`` phonemes (10 in the book, 11
steps), without a cache and with one; ``ex3``: a cross-attention whose lengths differ,
for a batch of two words, one with more phonemes than letters and one with fewer
(["box", "knight"] in the book): the shape of its weights, and the boolean mask (True =
may attend) its ``valid_lens`` stand for, broadcast over the heads.
The worked solutions are ``notebooks/solutions/08_solutions.ipynb``.

Each student gets a variant of each exercise (``variants``, the book's first; see
d2lutil.exercises.variants): another word for ``ex1``, another length for ``ex2``,
another pair of words for ``ex3``. The variants carry their words' pronunciations from
the dictionary (``d2lutil.pronunciations``, checked by
tests/exercises/test_exercises_nb08.py), so building a variant's checks reads no
dictionary. Which letter decides ``CH`` (``ex1``'s third part) is the same for every such
word: open-book.

Points, on the chapter's scale: 1 for a look-up (a value read off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; several parts of one exercise may share its worth.
"""

import json

import numpy as np
import torch

from ..masks import valid_lens_to_bool
from . import Exercise, distinct, integer, numbers_close

__all__ = ["ex1", "ex2", "ex3"]


# Exercise 1: a -stion word said S CH AH N, teacher forced. For "question", K W EH S CH
# AH N, the decoder's input is <bos> K W EH S CH AH N; row 4 predicts CH and reads S.
# The variants: the dictionary's other -stion words said S CH AH N, with their
# pronunciations (d2lutil.pronunciations.load_dictionary()[word], joined by spaces).
# Six variants, not ten (issue 45): the dictionary has only 9 -stion words said S CH AH N,
# and the longest of the others do not fit the translator's words.
_EX1_VARIANTS = [
    {"word": "question", "phonemes": "K W EH S CH AH N"},
    {"word": "bastion", "phonemes": "B AE S CH AH N"},
    {"word": "combustion", "phonemes": "K AH M B AH S CH AH N"},
    {"word": "digestion", "phonemes": "D AY JH EH S CH AH N"},
    {"word": "exhaustion", "phonemes": "IH G Z AO S CH AH N"},
    {"word": "indigestion", "phonemes": "IH N D AY JH EH S CH AH N"},
]


def _ex1_parts(word, phonemes):
    said = phonemes.split()
    row = said.index("CH")  # the row that predicts CH reads the phoneme before it
    keys = row + 1
    return [
        ("keys the row's self-attention sees", integer(
            keys, what="count of keys", mistakes=distinct(keys, [
                (len(said) + 1, "that is every row of the word: the causal valid_lens hide "
                                "the phonemes the row is yet to predict"),
                (row, "the row's own input token is one of its keys: row t sees t + 1 "
                      "tokens, <bos> first"),
                (len(said), "that counts the phonemes of the word; a row sees only the "
                            "tokens given before its prediction")]))),
        ("keys its cross-attention sees", integer(
            len(word), what="count of keys", mistakes=distinct(len(word), [
                (keys, "the cross-attention is not causal: every phoneme row may read "
                       "every letter of the word"),
                (len(said), "its keys are the letters of the word, not the phonemes")]))),
        ("the deciding letter, counted from the t", integer(
            -1, what="offset", mistakes=[
                (1, "the letter after the t is i in every -tion word: it cannot tell CH "
                    "from SH"),
                (0, "every -tion word has the t: look at the letter that -stion and -ntion "
                    "do not share")]))]


def _ex1_hints(word, phonemes):
    return [
        f"Write the decoder's input for \"{word}\" under its targets: `<bos>` {phonemes} "
        f"over {phonemes} `<eos>`. Which of those inputs may the row that predicts CH "
        "read, and which letters? For the letter: -stion says CH, -ntion mostly SH, and "
        "the t and the i after it are in both.",
        "The translator's `decode` gives the self-attention the causal `valid_lens` "
        "$t + 1$ for row $t$, and the cross-attention the letters' `source_valid_lens`. "
        "Check on any `Translator` (trained or not): run the batch of "
        f"`pronunciations.make_batch([\"{word}\"], ...)` and count the nonzero weights "
        "of the row in `model.decoder.self_attention.attention_weights` and "
        "`model.decoder.cross_attention.attention_weights`.",
    ]


ex1 = Exercise(
    1,
    _ex1_parts,
    answers=("self_keys", "cross_keys", "deciding_offset"),
    hints=_ex1_hints,
    solution=(
        "The decoder's input is `<bos>` K W EH S CH AH N, and row 4 predicts CH from "
        "the input S. Its causal self-attention sees the 5 tokens `<bos>` K W EH S (its "
        "own and the earlier ones); its cross-attention is not causal and sees all 8 "
        "letters of question. The letter that decides is the s before the t, offset "
        "$-1$: 9 of the dictionary's 10 -stion words end in CH AH N, while 10 of its "
        "13 -ntion words keep SH AH N; the i after the t is the same in both. A "
        "cross-attention head would have to look one letter behind the t for it, but "
        "the model need not: the row's own input is the S it has just said, in the "
        "residual stream and among its self-attention's keys. "
        "See `solutions/08_solutions.ipynb`."),
    open_part="where a head would have to look, and why the model need not",
    # the two counts: one derivation from the two valid_lens (2), split over its parts;
    # the letter: -1 for every variant, and the question's own counts (-stion against
    # -ntion) give it away, so it is worth nothing on its own (issue 45): the rubric
    # marks where a head would have to look, the reason it rests on
    points=[1, 1, 0],
    rubric=[
        (1, "says a cross-attention head would have to look one letter behind the t, "
            "at the s (behind the letter being spoken)"),
        (2, "explains why no head needs to: the row's own input is the phoneme just "
            "said, S, which reaches the row through its residual stream and its causal "
            "self-attention"),
    ],
    variants=_EX1_VARIANTS,
    open_book={2: "every variant's word ends in -stion said S CH AH N, so the letter "
                  "that decides CH is the s just before the t, offset -1, for all of "
                  "them (the dictionary's -stion and -ntion words, not the word, decide "
                  "it)"},
)


def _ex2_parts(num_phonemes):
    steps = num_phonemes + 1  # the last step gives <eos>
    without = steps * (steps + 1) // 2  # step t projects t tokens
    return [
        ("positions projected without a cache", integer(
            without, what="count of positions", mistakes=distinct(without, [
                (without - steps, "that stops a step early: the last step, which "
                                  "produces <eos>, also projects every token it reads"),
                (steps * steps, "step t reads only the t tokens so far, not all of "
                                "them"),
                (steps, "that is with a cache: without one, every step projects the "
                        "whole prefix again")]))),
        ("positions projected with a cache", integer(
            steps, what="count of positions", mistakes=distinct(steps, [
                (1, "each step of the decode projects its new token"),
                (without, "that is without a cache: with one, a step projects its new "
                          "token only"),
                (num_phonemes, "that leaves out a step: greedy decoding also takes the "
                               "step that gives <eos>, and it projects its new token "
                               "too")])))]


def _ex2_hints(num_phonemes):
    return [
        "Write down what the decoder is given at step 1, step 2 and step 3 of greedy "
        "decoding, without a cache and with one, and count the tokens whose keys and "
        "values are computed at each step.",
        "Check it by counting: a forward hook on `model.decoder.self_attention.W_k` is "
        "called as `hook(module, inputs, output)`, where `inputs` is a tuple; add up "
        "`inputs[0].shape[1]` while you decode one word whose pronunciation the model "
        f"ends after {num_phonemes} phonemes, with and without the cache.",
    ]


ex2 = Exercise(
    2,
    _ex2_parts,
    answers=("projected_without", "projected_with"),
    hints=_ex2_hints,
    solution=(
        r"Without a cache step $t$ projects $t$ tokens: $1 + 2 + \dots + 11 = 66$ "
        "positions; with a cache one per step: 11. The cache turns a quadratic count "
        "into a linear one, and both decodes give the same phonemes (the notebook "
        "asserts it). See `solutions/08_solutions.ipynb`."),
    # one computation (2): the count without a cache; with one it is the number of
    # steps, which the question states (num_phonemes + 1), so it is worth nothing on its
    # own (issue 45)
    points=[2, 0],
    # lengths of which the dictionary has hundreds of words or more, to decode one.
    # Eight, not ten (issue 45): the counts without a cache of 2, 3 and 9 phonemes (6, 10
    # and 55) are numbers the lesson prints, and the dictionary has 50 words of 13
    # phonemes and 2 longer, too few to find one the model decodes at that length
    variants=[{"num_phonemes": n} for n in (10, 5, 6, 7, 8, 12, 4, 11)],
)


# Exercise 3: a batch of two words, the first with more phonemes than letters, the
# second with fewer. The book's ["box", "knight"]: box 3 letters, B AA K S (4 phonemes
# and <eos>: 5 rows); knight 6 letters, N AY T (3 and <eos>: 4 rows, padded to 5). The
# variants carry the words' pronunciations as the dictionary gives them.
_EX3_VARIANTS = [
    {"words": ["box", "knight"], "phonemes": ["B AA K S", "N AY T"]},
    {"words": ["six", "thought"], "phonemes": ["S IH K S", "TH AO T"]},
    {"words": ["taxi", "night"], "phonemes": ["T AE K S IY", "N AY T"]},
    {"words": ["oxen", "through"], "phonemes": ["AA K S AH N", "TH R UW"]},
    {"words": ["mix", "high"], "phonemes": ["M IH K S", "HH AY"]},
    {"words": ["music", "knight"], "phonemes": ["M Y UW Z IH K", "N AY T"]},
    {"words": ["fox", "light"], "phonemes": ["F AA K S", "L AY T"]},
    {"words": ["tax", "eight"], "phonemes": ["T AE K S", "EY T"]},
    {"words": ["exit", "though"], "phonemes": ["EH G Z IH T", "DH OW"]},
    {"words": ["wax", "weigh"], "phonemes": ["W AE K S", "W EY"]},
]
_HEADS = 4  # the cross-attention's heads in notebook 8's translator
_ROWS_ONLY = ("those are the lengths of the phonemes (the queries); its valid_lens count "
              "the keys, the letters")


def _mask_checker(letter_lens, row_lens):
    """The mask's checker for words of ``letter_lens`` letters and ``row_lens`` rows
    (phonemes and <eos>): a ``numbers_close`` of the right mask, whose declared mistakes
    are computed from the same lengths. It reads True/False as 1/0 and a mask of the
    keys only, (batch_size, 1, 1, S), broadcast (readers.boolean_mask); a wrong shape's
    message does not name the right one, which is most of the answer to the first
    part."""
    letter_lens, row_lens = np.array(letter_lens), np.array(row_lens)
    T, S = row_lens.max(), letter_lens.max()
    t = np.arange(T)[None, None, :, None]
    s = np.arange(S)[None, None, None, :]
    # (2, 1, T, S): attend
    mask = valid_lens_to_bool(torch.as_tensor(letter_lens), int(S)).numpy() & (t >= 0)
    rows = row_lens[:, None, None, None]
    return numbers_close(mask.astype(float), read="boolean_mask", name_shape=False,
                         mistakes=distinct(mask, [
        (~mask, "True must mean 'may attend' (SDPA's convention); this is the opposite, "
                "like the key_padding_mask of nn.MultiheadAttention"),
        (mask & (s <= t), "the cross-attention is not causal: a phoneme row may read "
                          "every letter of its word, also letters further along"),
        ((s < rows) & (t >= 0), _ROWS_ONLY),
        ((s < rows - 1) & (t >= 0), _ROWS_ONLY),
        (mask & (t < rows), "the valid_lens mask keys only: a padded phoneme row still "
                            "attends to its word's letters (the loss, not the mask, leaves "
                            "it out)"),
        (np.ones_like(mask), "the letters past a word's end are padding: a row must not "
                             "attend to them")]))


def _ex3_parts(words, phonemes):
    letter_lens = [len(w) for w in words]
    row_lens = [len(p.split()) + 1 for p in phonemes]  # the phonemes and <eos>
    T, S = max(row_lens), max(letter_lens)
    shape = [len(words), _HEADS, T, S]
    return [
        ("shape of the cross-attention weights", numbers_close(
            shape, mistakes=distinct(shape, [
                ([len(words), _HEADS, S, T], "rows are the queries, one per phoneme "
                                             "predicted; columns the keys, the letters"),
                ([len(words), _HEADS, T - 1, S], "each word also has the row that "
                                                 "predicts <eos>"),
                ([len(words), _HEADS, T, min(letter_lens)], "the letters are padded to "
                                                            "the longest word of the "
                                                            "batch")]))),
        ("the mask, True where a row may attend to a letter",
         _mask_checker(letter_lens, row_lens))]


def _ex3_hints(words, phonemes):
    return [
        f"Build the batch with `pronunciations.make_batch({json.dumps(words)}, entries, "
        "letters, phonemes)` and run it through `model`: the weights are "
        "(batch_size, num_heads, rows, letters), a row per phoneme predicted, `<eos>` "
        "included, and a column per letter, each padded to the longest in the batch.",
        "The cross-attention gets `batch[\"source_valid_lens\"]`, one length per word, "
        "the same for every row. Build the mask from those lengths, with an axis for each "
        "of the weights' axes (the heads' of size 1, so that it broadcasts), and check it: "
        "where it is False, every head's weight must be 0.",
    ]


ex3 = Exercise(
    3,
    _ex3_parts,
    answers=("weights_shape", "cross_mask"),
    hints=_ex3_hints,
    solution=(
        "box has 3 letters and 4 phonemes, knight 6 letters and 3 phonemes; with `<eos>` "
        "the rows are 5 and 4, padded to 5, and the letters are padded to 6. The "
        "weights are (2, 4, 5, 6): more rows than letters for box, fewer for knight. "
        "The cross-attention's `valid_lens` are the letter counts (3, 6), so the mask "
        "is True for letters 0 to 2 of box and 0 to 5 of knight, in every row, knight's "
        "padded row 4 too: `torch.arange(6) < lens[:, None, None, None]`, expanded to "
        "(2, 1, 5, 6), which broadcasts over the 4 heads. It is neither causal nor "
        "built from the phonemes' lengths. See `solutions/08_solutions.ipynb`."),
    # the shape: what a forward pass of the lesson's model returns, worth nothing on its
    # own (issue 45); the mask rests on it (T and S) and carries its point with its own
    # computation (2)
    points=[0, 3],
    variants=_EX3_VARIANTS,
)
