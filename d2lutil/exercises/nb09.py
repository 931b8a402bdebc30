"""The exercises of notebook 09, "Reading the Heads", with their checks.

``ex1``: how many words begin with "ge", "gi" or "gy", and how many of them with
``JH`` (the head test for g is open-ended); ``ex2``: the first column of head 2's
slice of the input to the cross-attention's W_o, and how many entries of W_o read
that slice (why swapping the slice swaps the head's contribution is open-ended).
The worked solutions are ``notebooks/solutions/09_solutions.ipynb``.
"""

from . import Exercise, integer

__all__ = ["ex1", "ex2"]

ex1 = Exercise(
    1,
    [("words beginning with ge, gi or gy", integer(
        1148, what="count of words", mistakes=[
            (717, "that counts the words beginning with ce, ci or cy; the question is "
                  "about g")])),
     ("of those, pronunciations beginning with JH", integer(
         571, what="count of words", mistakes=[
             (546, "that counts the ones beginning with G; the question asks for JH"),
             (1148, "that is every word beginning with ge, gi or gy; compare the first "
                    "phoneme with 'JH'")]))],
    hints=[
        "Use the dictionary as loaded, `pronunciations.load_dictionary()`: keep the "
        "words whose first two letters are one of 'ge', 'gi', 'gy'.",
        "For each of them look at the first phoneme, `entries[word][0]`. Do the same "
        "for 'ce', 'ci', 'cy' and `S` to compare.",
    ],
    solution=(
        "1148 words begin with ge, gi or gy, and 571 of them with JH (gem, giant, gym); "
        "546 begin with G (get, girl, gift). For c the rule nearly holds: 573 of the "
        "717 words beginning with ce, ci or cy begin with S. So the next letter "
        "decides a g far less than a c: a look-ahead head can fetch the e, but the "
        "model must also know the word. The head test: take notebook 9's soft-c rows "
        "for g (rows that predict JH for a g before e, i or y; as controls, the same "
        "letters spoken G, and a g before a, o or u), and count the rows wrong with "
        "each head switched off in turn. With the look-ahead head off, most JH rows go "
        "wrong while the G rows before e, i or y get no worse: without it the model "
        "says G. No other head does that, and the hard g and the average row lose far "
        "less. The worked solution computes it in "
        "`solutions/09_solutions.ipynb`."),
    open_part="what the look-ahead head does for a g",
)

ex2 = Exercise(
    2,
    [("first column of head 2's slice", integer(
        32, what="column index", mistakes=[
            (2, "that is the head's number; its slice starts at head * head_size"),
            (48, "that is where head 3's slice starts: head 2's ends there"),
            (33, "columns count from 0: head 0's slice starts at column 0")])),
     ("entries of W_o in W_o^(2)", integer(
         1024, what="count of entries", mistakes=[
             (4096, "that is all of W_o; W_o^(2) is the columns that read head 2 only"),
             (256, "W_o^(2) has a row per output feature (64), not per head feature"),
             (16, "that is the width of one head's slice; count the 64 rows too")]))],
    hints=[
        "`head_size = num_hiddens // num_heads`, and the heads' outputs are "
        "concatenated in order before `W_o`: head $h$ takes columns "
        "`h * head_size` to `(h + 1) * head_size - 1`.",
        "`W_o.weight` has shape (64, 64): (outputs, inputs). `head_values` reshapes "
        "it to (64, num_heads, head_size); count the entries of `[:, 2]`.",
    ],
    solution=(
        "head_size = 64 / 4 = 16, so head 2's slice is columns 32 to 47, and "
        r"$\mathbf{W}_o^{(2)}$ is the 64 x 16 block of `W_o.weight` that reads them: "
        r"1024 entries. The output is $\sum_h \mathbf{W}_o^{(h)} \mathbf{o}_h$ (the "
        "translator's W_o has no bias), linear in each slice and no slice touches "
        "another head's "
        r"columns, so replacing $\mathbf{o}_h$ replaces exactly head $h$'s "
        "contribution and nothing else. See `solutions/09_solutions.ipynb`."),
    open_part="why swapping the slice swaps the head's contribution",
)
