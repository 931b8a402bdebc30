"""The exercises of notebook 09, "Reading the Heads", with their checks.

``ex1``: the soft-c head test redone for g: which head, by its role, turns the most rows
of a g spoken ``JH`` before e, i or y into ``G`` when switched off, and whether the model
misses those rows more often than the soft c's with every head on (why, and what the
``G`` rows say, is open-ended); ``ex2``: the first column of head ``head``'s slice of
the input to a cross-attention's W_o, for ``num_hiddens`` = 64 and ``num_heads`` heads
(head 2 of notebook 8's 4 heads in the book), and how many entries of W_o read that slice
(why swapping the slice swaps the head's contribution is open-ended).
The worked solutions are ``notebooks/solutions/09_solutions.ipynb``.

Each student gets a variant of ``ex2`` (``variants``, the book's first; see
d2lutil.exercises.variants): another number of heads and another head. ``ex1`` reads
notebook 8's trained model and is the same for everyone: open-book.

Points, on the chapter's scale: 1 for a look-up (a value read off the notebook, the
library or the docs), 2 for a computation or a derivation, 3 for an implementation or a
proof; several parts of one exercise may share its worth.
"""

from . import Exercise, distinct, integer, truth, word

__all__ = ["ex1", "ex2"]

ex1 = Exercise(
    1,
    [("the head whose absence turns the most JH rows into G", word(
        "look-ahead", ["anchor", "look-ahead", "other"],
        aliases={"lookahead": "look-ahead", "look ahead": "look-ahead",
                 "the look-ahead head": "look-ahead", "the anchor": "anchor"},
        mistakes=[
            ("anchor", "count, with each head off in turn, the JH rows now said G: the "
                       "anchor sits on the g itself, which gem and get share"),
            ("other", "a head whose absence costs every kind of row is no evidence about "
                      "the g: count the JH rows now said G, with each head off in turn")])),
     ("with every head on, are these JH rows missed more often than the soft c's?",
      truth(True, wrong_message="compare the shares missed with every head on: the g's "
                                "spoken JH against the c's spoken S (`soft`)"))],
    answers=("g_head_role", "g_missed_more"),
    hints=[
        "`g_jh = letter_rows(\"g\", \"eiy\", \"JH\")` and `g_g = letter_rows(\"g\", "
        "\"eiy\", \"G\")` are the rows; `teacher_forced(head_off(i))[1]` is the model's "
        "first choice with head `i` off, and `turned(choice, g_jh, \"G\")` the share of "
        "the JH rows it says as G.",
        "Do it for every head and for `choice_all` (every head on), and name the head "
        "with the largest share by its role: `anchor`, `look` or another. For the "
        "second part, a row is missed when the model's first choice is not the "
        "dictionary's phoneme: work out that share for the JH rows and for the soft c's "
        "`S` rows (`soft`) with every head on, and write both shares in your answer.",
    ],
    solution=(
        "With the look-ahead head off, nearly three quarters of the rows of a g spoken "
        "JH before e, i or y are said G at seed 0, far more than with any other head "
        "off, while the rows the dictionary says G before the same letters get no "
        "worse: that head brings what makes a g soft, as it does for the c. With every "
        "head on, the soft g is missed more often than the soft c (a third of its rows "
        "at seed 0, against one in twenty). The dictionary says why: at the start of a "
        "word, a c before e, i or y is S in four words of five, a g before them JH in "
        "only about half (gem, giant; but get, girl). At seed 0 the anchor, on the g "
        "itself, pulls the other way: with it off, most G rows before e, i or y go "
        "wrong and almost no JH row is said G. Looking ahead is needed for a soft g, "
        "and it is not enough: the model must also know the word. The worked solution "
        "computes it in `solutions/09_solutions.ipynb`."),
    open_part="the shares both answers rest on, why the soft g is missed more, and what "
              "the G rows say",
    open_book={
        0: "the head test runs on the shipped trained model, the same for every "
           "student, and by role its answer is the look-ahead head at every seed",
        1: "read off the same trained model with every head on; the lesson says it holds "
           "for every seed (the soft g is a coin toss in the dictionary, the soft c is "
           "not)"},
    # the role: a choice of three, the comparison: yes or no, both the same for every
    # student; neither scores on its own (issue 45): their points (2 + 1) go to the
    # shares they rest on, marked by the rubric's first criterion
    points=[0, 0],
    rubric=[
        (3, "reports the shares both answers rest on, computed: for each head switched "
            "off, the share of the JH rows said G (the look-ahead head's the largest, "
            "nearly three quarters at seed 0), and with every head on the shares of the "
            "JH rows and of the soft c's S rows missed (about a third against one in "
            "twenty)"),
        (2, "explains that the letter after a g decides its sound far less than after a "
            "c (the dictionary says G for about half its ge, gi and gy words), so "
            "looking ahead is needed for JH but not enough: the model must also know "
            "the word"),
        (1, "uses the controls: with the look-ahead head off the G rows before e, i, y "
            "get no worse, and no other head turns JH into G as much, so it is that "
            "head's doing, not damage in general"),
    ],
)

_NUM_HIDDENS = 64  # the translator's width: W_o's weight is (64, 64)


def _distinct(expected, mistakes):
    """``mistakes`` without negative ones (no column or count is), and without those that
    are ``expected`` or an earlier one (a variant's sizes can make two coincide)."""
    return distinct(expected, [(v, m) for v, m in mistakes if v >= 0])


def _ex2_parts(num_heads, head):
    head_size = _NUM_HIDDENS // num_heads
    first = head * head_size
    entries = _NUM_HIDDENS * head_size
    return [
        ("first column of the head's slice", integer(
            first, what="column index", mistakes=_distinct(first, [
                (head, "that is the head's number; its slice starts at head * head_size"),
                (first + head_size, f"that is where the next slice starts: head {head}'s "
                                    "ends there"),
                (first - head_size, f"that is the first column of head {head - 1}'s "
                                    "slice: heads are numbered from 0, head 0 first"),
                (first + 1, "columns count from 0: head 0's slice starts at column 0")]))),
        ("entries of W_o in the head's block W_o^(h)", integer(
            entries, what="count of entries", mistakes=_distinct(entries, [
                (_NUM_HIDDENS * _NUM_HIDDENS, f"that is all of W_o; W_o^({head}) is the "
                                              f"columns that read head {head} only"),
                (_NUM_HIDDENS * num_heads, f"W_o^({head}) has a row per output feature "
                                           f"({_NUM_HIDDENS}), and a column per feature "
                                           "of the head, not per head"),
                (head_size, "that is the width of one head's slice; W_o^(h) also has a "
                            "row per output feature")])))]


def _ex2_hints(num_heads, head):
    return [
        "`head_size = num_hiddens // num_heads`, and the heads' outputs are "
        "concatenated in order before `W_o`, head 0 first: which columns does head 0 "
        "take, and head 1?",
        f"`W_o.weight` has shape ({_NUM_HIDDENS}, {_NUM_HIDDENS}): (outputs, inputs). "
        f"Reshaped to ({_NUM_HIDDENS}, num_heads, head_size), as `head_values` does, "
        f"which index picks head {head}'s block, and how many entries has it? A "
        f"`d2lutil.MultiHeadAttention({_NUM_HIDDENS}, {num_heads}, ...)` with head "
        f"{head} switched off (`head_mask`) shows which input columns of `W_o` it fills.",
    ]


ex2 = Exercise(
    2,
    _ex2_parts,
    answers=("first_column", "num_entries"),
    hints=_ex2_hints,
    solution=(
        "head_size = 64 / 4 = 16, so head 2's slice is columns 32 to 47, and "
        r"$\mathbf{W}_o^{(2)}$ is the 64 x 16 block of `W_o.weight` that reads them: "
        r"1024 entries. The output is $\sum_h \mathbf{W}_o^{(h)} \mathbf{o}_h$ (the "
        "translator's W_o has no bias), linear in each slice and no slice touches "
        "another head's "
        r"columns, so replacing $\mathbf{o}_h$ replaces exactly head $h$'s "
        "contribution and nothing else. See `solutions/09_solutions.ipynb`."),
    open_part="why swapping the slice swaps the head's contribution",
    # one computation (2), split over its two parts
    points=[1, 1],
    rubric=[
        (2, "writes the output as the sum over the heads of W_o^(h) o_h (W_o linear, "
            "no bias, each column reading one head's slice), so replacing o_h replaces "
            "exactly head h's term and leaves the others"),
    ],
    # num_hiddens stays 64 (the question's W_o is (64, 64)); the heads differ from the
    # book's 4, so that the block's entries differ from the book's too
    variants=[{"num_heads": 4, "head": 2}, {"num_heads": 16, "head": 7},
              {"num_heads": 32, "head": 7}, {"num_heads": 16, "head": 5},
              {"num_heads": 16, "head": 11}, {"num_heads": 16, "head": 14},
              {"num_heads": 32, "head": 13}, {"num_heads": 32, "head": 20},
              {"num_heads": 32, "head": 25}, {"num_heads": 16, "head": 9}],
)
