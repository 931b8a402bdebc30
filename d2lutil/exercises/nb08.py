"""The exercises of notebook 08, "Spelling to Sound", with their checks.

``ex1``: the row of "question" that predicts ``CH``: how many keys its causal
self-attention sees and how many its cross-attention sees, and which letter, counted
from the t, decides ``CH`` over ``SH`` (where a head would have to look for it, and why
the model need not, is open-ended); ``ex2``: the token positions whose keys and values
the decoder's self-attention projects while greedy decoding takes 11 steps, without a
cache and with one; ``ex3``: a cross-attention whose lengths differ, for the batch
["box", "knight"]: the shape of its weights, and the boolean mask (True = may attend)
its ``valid_lens`` stand for, broadcast over the heads.
The worked solutions are ``notebooks/solutions/08_solutions.ipynb``.

Points, on the chapter's scale: 1 for a look-up (a value read off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; several parts of one exercise may share its worth.
"""

import numpy as np

from . import Exercise, Wrong, integer, numbers_close
from .checkers import around

__all__ = ["ex1", "ex2", "ex3"]

# Exercise 1: "question", K W EH S CH AH N, teacher forced. The decoder's input is
# <bos> K W EH S CH AH N; row 4 predicts CH and reads S.
_ROW = 4  # the row that predicts CH
_LETTERS = len("question")

ex1 = Exercise(
    1,
    [("keys the row's self-attention sees", integer(
        _ROW + 1, what="count of keys", mistakes=[
            (8, "that is every row of the word: the causal valid_lens hide the phonemes "
                "the row is yet to predict"),
            (_ROW, "the row's own input token is one of its keys: row t sees t + 1 tokens, "
                   "<bos> first"),
            (7, "that counts the phonemes of the word; a row sees only the tokens given "
                "before its prediction")])),
     ("keys its cross-attention sees", integer(
         _LETTERS, what="count of keys", mistakes=[
             (_ROW + 1, "the cross-attention is not causal: every phoneme row may read "
                        "every letter of the word"),
             (7, "its keys are the letters of the word, not the phonemes")])),
     ("the deciding letter, counted from the t", integer(
         -1, what="offset", mistakes=[
             (1, "the letter after the t is i in every -tion word: it cannot tell CH "
                 "from SH"),
             (0, "every -tion word has the t: look at the letter that -stion and -ntion "
                 "do not share")]))],
    hints=[
        "Write the decoder's input for \"question\" under its targets: `<bos>` K W EH S "
        "CH AH N over K W EH S CH AH N `<eos>`. Which of those inputs may the row that "
        "predicts CH read, and which letters? For the letter: -stion says CH, -ntion "
        "mostly SH, and the t and the i after it are in both.",
        "The translator's `decode` gives the self-attention the causal `valid_lens` "
        "$t + 1$ for row $t$, and the cross-attention the letters' `source_valid_lens`. "
        "Check on any `Translator` (trained or not): run the batch of "
        "`pronunciations.make_batch([\"question\"], ...)` and count the nonzero weights "
        "of the row in `model.decoder.self_attention.attention_weights` and "
        "`model.decoder.cross_attention.attention_weights`.",
    ],
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
    # the letter: a look-up in the dictionary's counts the question gives (1)
    points=[1, 1, 1],
    rubric=[
        (1, "says a cross-attention head would have to look one letter behind the t, "
            "at the s (behind the letter being spoken)"),
        (2, "explains why no head needs to: the row's own input is the phoneme just "
            "said, S, which reaches the row through its residual stream and its causal "
            "self-attention"),
    ],
)

ex2 = Exercise(
    2,
    [("positions projected without a cache", integer(
        66, what="count of positions", mistakes=[
            (55, "that is 10 steps; the 11th step, which produces <eos>, reads 11 tokens"),
            (121, "step t reads only the t tokens so far, not all 11"),
            (11, "that is with a cache: without one, every step projects the whole "
                 "prefix again")])),
     ("positions projected with a cache", integer(
         11, what="count of positions", mistakes=[
             (1, "each of the 11 steps projects its new token"),
             (66, "that is without a cache: with one, a step projects its new token "
                  "only")]))],
    hints=[
        "Write down what the decoder is given at step 1, step 2 and step 3 of greedy "
        "decoding, without a cache and with one, and count the tokens whose keys and "
        "values are computed at each step.",
        "Check it by counting: a forward hook on `model.decoder.self_attention.W_k` is "
        "called as `hook(module, inputs, output)`, where `inputs` is a tuple; add up "
        "`inputs[0].shape[1]` while you decode one word whose pronunciation the model "
        "ends after 10 phonemes, with and without the cache.",
    ],
    solution=(
        r"Without a cache step $t$ projects $t$ tokens: $1 + 2 + \dots + 11 = 66$ "
        "positions; with a cache one per step: 11. The cache turns a quadratic count "
        "into a linear one, and both decodes give the same phonemes (the notebook "
        "asserts it). See `solutions/08_solutions.ipynb`."),
    # one computation (2): the count without a cache; with one it is a look-up (1)
    points=[2, 1],
)


# Exercise 3: the batch ["box", "knight"]. box: 3 letters, B AA K S (4 phonemes and
# <eos>: 5 rows); knight: 6 letters, N AY T (3 and <eos>: 4 rows, padded to 5).
_LETTER_LENS, _ROW_LENS = np.array([3, 6]), np.array([5, 4])  # keys, queries (<eos> in)
_T, _S = _ROW_LENS.max(), _LETTER_LENS.max()
_t = np.arange(_T)[None, None, :, None]
_s = np.arange(_S)[None, None, None, :]
_MASK = (_s < _LETTER_LENS[:, None, None, None]) & (_t >= 0)  # (2, 1, 5, 6), True: attend
_ROWS_ONLY = ("those are the lengths of the phonemes (the queries); its valid_lens count "
              "the keys, the letters")
_MASK_VALUES = numbers_close(_MASK.astype(float), mistakes=[
    (~_MASK, "True must mean 'may attend' (SDPA's convention); this is the opposite, "
             "like the key_padding_mask of nn.MultiheadAttention"),
    (_MASK & (_s <= _t), "the cross-attention is not causal: a phoneme row may read every "
                         "letter of its word, also letters further along"),
    ((_s < _ROW_LENS[:, None, None, None]) & (_t >= 0), _ROWS_ONLY),
    ((_s < (_ROW_LENS - 1)[:, None, None, None]) & (_t >= 0), _ROWS_ONLY),
    (_MASK & (_t < _ROW_LENS[:, None, None, None]),
     "the valid_lens mask keys only: a padded phoneme row still attends to its word's "
     "letters (the loss, not the mask, leaves it out)"),
    (np.ones_like(_MASK), "the letters past a word's end are padding: a row must not "
                          "attend to them")])


@around(_MASK_VALUES)
def _mask(answer):
    """The mask as numbers: True/False count as 1/0, and a mask of 4 axes that
    broadcasts to (2, 1, T, S), such as (2, 1, 1, S), is read broadcast; a mask of
    fewer axes would not broadcast over the heads' axis."""
    values = None
    if hasattr(answer, "tolist") or isinstance(answer, (list, tuple)):
        try:
            values = np.asarray(answer.tolist() if hasattr(answer, "tolist") else answer)
        except (TypeError, ValueError):
            values = None
    if values is not None and (values.dtype == bool or np.issubdtype(
            values.dtype, np.number)):
        values = values.astype(float)
        if 1 < values.ndim < 4:
            raise Wrong(f"a mask of shape {values.shape} does not line up with the "
                        "weights' axes (batch_size, num_heads, T, S): give it all four, "
                        "the heads' as 1")
        if values.ndim == 4:
            try:
                values = np.broadcast_to(values, _MASK.shape)
            except ValueError:
                pass  # the check names the shape
        answer = values
    _MASK_VALUES(answer)


ex3 = Exercise(
    3,
    [("shape of the cross-attention weights", numbers_close(
        [2, 4, _T, _S], mistakes=[
            ([2, 4, _S, _T], "rows are the queries, one per phoneme predicted; columns the "
                             "keys, the letters"),
            ([2, 4, _T - 1, _S], "each word also has the row that predicts <eos>"),
            ([2, 4, _T, 3], "the letters are padded to the longest word of the batch")])),
     ("the mask, True where a row may attend to a letter", _mask)],
    hints=[
        "Build the batch with `pronunciations.make_batch([\"box\", \"knight\"], entries, "
        "letters, phonemes)` and run it through `model`: the weights are "
        "(batch_size, num_heads, rows, letters), a row per phoneme predicted, `<eos>` "
        "included, and a column per letter, each padded to the longest in the batch.",
        "The cross-attention gets `batch[\"source_valid_lens\"]`, one length per word, "
        "the same for every row. Compare `torch.arange(S)` with those lengths, add the "
        "axes so the result is (batch_size, 1, 1, S), and `expand` it to (batch_size, 1, "
        "T, S). Check it: where it is False, every head's weight must be 0.",
    ],
    solution=(
        "box has 3 letters and 4 phonemes, knight 6 letters and 3 phonemes; with `<eos>` "
        "the rows are 5 and 4, padded to 5, and the letters are padded to 6. The "
        "weights are (2, 4, 5, 6): more rows than letters for box, fewer for knight. "
        "The cross-attention's `valid_lens` are the letter counts (3, 6), so the mask "
        "is True for letters 0 to 2 of box and 0 to 5 of knight, in every row, knight's "
        "padded row 4 too: `torch.arange(6) < lens[:, None, None, None]`, expanded to "
        "(2, 1, 5, 6), which broadcasts over the 4 heads. It is neither causal nor "
        "built from the phonemes' lengths. See `solutions/08_solutions.ipynb`."),
    # the shape: read off a forward pass (1); the mask: a computation (2)
    points=[1, 2],
)
