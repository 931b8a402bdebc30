"""Notebook 08's exercises: what tests/test_exercises_declared.py cannot say.

Two of exercise 1's declared mistakes are the counts over notebook 8's training words:
computed here, they get their message. The right answers are computed and checked in
notebooks/solutions/08_solutions.ipynb.
"""

from d2lutil import pronunciations
from d2lutil.exercises.nb08 import ex1


def test_ex1_names_the_training_words_only(capsys):
    """822 and 807 are the counts over the training words of notebook 8."""
    every = pronunciations.load_dictionary(all_pronunciations=True)
    entries = {word: options[0] for word, options in every.items()}
    train_words, _, _ = pronunciations.split_words(entries, num_test=2_000, seed=0)
    tion = [word for word in train_words if word.endswith("tion")]
    shan = sum(entries[word][-3:] == ("SH", "AH", "N") for word in tion)
    assert not ex1.check(len(tion), shan)
    assert capsys.readouterr().out.count("training words only") == 2
