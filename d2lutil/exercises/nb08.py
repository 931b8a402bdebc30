"""The exercises of notebook 08, "Spelling to Sound", with their checks.

``ex1``: how many dictionary words end in "tion", and how many of them the dictionary
says with ``SH AH N`` at the end (which of the others is open-ended); ``ex2``: the token
positions whose keys and values the decoder's self-attention projects while greedy
decoding takes 11 steps, without a cache and with one; ``ex3``: the edit distance and
the phoneme error rate of one pronunciation of "attention", by hand (which edits is
open-ended). Exercise 4 of earlier versions, the soft g and the head test, is
notebook 9's ``ex1`` (``d2lutil.exercises.nb09``).
The worked solutions are ``notebooks/solutions/08_solutions.ipynb``.
"""

from . import Exercise, integer, number

__all__ = ["ex1", "ex2", "ex3"]

ex1 = Exercise(
    1,
    [("words ending in 'tion'", integer(
        833, what="count of words", mistakes=[
            (1341, "that counts every word containing 'tion'; the question asks for the "
                   "words that end in it"),
            (822, "that counts the training words only; the question asks about the "
                  "whole dictionary as loaded")])),
     ("of those, pronunciations ending in SH AH N", integer(
         817, what="count of words", mistakes=[
             (833, "that is every word ending in 'tion'; compare the end of each "
                   "pronunciation with ('SH', 'AH', 'N')"),
             (807, "that counts the training words only; the question asks about the "
                   "whole dictionary as loaded")]))],
    hints=[
        "Load the dictionary with `pronunciations.load_dictionary()`: a dict from each "
        "word to its tuple of phonemes, stress digits removed.",
        "Keep the words `w` with `w.endswith('tion')`, then count those whose phonemes "
        "`p` satisfy `p[-3:] == ('SH', 'AH', 'N')`. Print a few of the others.",
    ],
    solution=(
        "833 words of 3 to 12 letters end in 'tion', and 817 of them end in SH AH N "
        "(attention, nation, ...). Of the 16 others, 12 end in CH AH N, equation ends in "
        "ZH AH N, and three are rarities (cation, mation, martion). What gives CH is an "
        "s before the t: 9 of the 10 words ending in -stion end in CH AH N (question, "
        "suggestion). An n does not: 10 of the 13 words ending in -ntion keep SH AH N "
        "(attention, mention), and only 3 have CH (intention, inattention, abstention). "
        "So -tion is about as regular as English spelling gets, and its one real "
        "exception comes from the letter before the t. A model does not need to look "
        "back at that letter: it has just said the s as S, so the phoneme before tells "
        "it. See `solutions/08_solutions.ipynb`."),
    open_part="what the other words are",
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
)

ex3 = Exercise(
    3,
    [("edit distance", integer(
        4, what="count of edits", mistakes=[
            (5, "count again: a substitution is one edit, and the shared T, N and the "
                "final AH N cost nothing"),
            (3, "the model's version is one phoneme longer, so at least one edit is an "
                "insertion or deletion besides the substitutions")])),
     ("phoneme error rate of this word", number(
         4 / 7, atol=0.005, mistakes=[
             (4 / 8, "divide by the dictionary's length (7 phonemes), not the model's")]))],
    hints=[
        "Write the two sequences one above the other and line up what they share: "
        "T, then N, then AH N at the end.",
        "Fill in the edit-distance table (`pronunciations.edit_distance` computes it) "
        "and divide by the number of phonemes in the dictionary's pronunciation.",
    ],
    solution=(
        "AE T AH N T IY AH N against AH T EH N SH AH N: substitute AE -> AH and AH -> "
        "EH, substitute T -> SH and delete IY (or delete T and substitute IY -> SH): 4 "
        "edits, and no alignment does it with fewer, since the two differ in length by 1 "
        r"and in at least three aligned places. $\mathrm{PER} = 4/7 = 0.57$ for this "
        "word. The model reads tt as one T, as the dictionary does, but says the t of "
        "-tion as T followed by IY, where the dictionary has SH. See "
        "`solutions/08_solutions.ipynb`."),
    open_part="which edits",
)
