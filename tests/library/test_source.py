"""d2lutil.source: excerpts of the library's own code, as the notebooks show them."""

import pytest

from d2lutil import source


def sample(x):
    """A docstring."""
    y = x + 1
    if y > 2:
        y = 2
    return y


def test_excerpt_cuts_from_start_through_the_next_stop():
    assert source.excerpt(sample, "y = x", "return") == (
        "y = x + 1\nif y > 2:\n    y = 2\nreturn y")
    assert source.excerpt(sample, "if y") == "if y > 2:\n    y = 2\nreturn y"
    assert source.excerpt(sample, "y = 2", "y = 2") == "y = 2"  # dedented
    assert source.excerpt(sample).startswith("def sample(x):\n")
    # stop is looked for from start on: "y" first appears after start here
    assert source.excerpt(sample, "if y", "y").splitlines() == ["if y > 2:"]


def test_excerpt_names_a_marker_it_cannot_find():
    with pytest.raises(ValueError, match=r"no line of the source of sample from line 1 on "
                                         r"contains 'while'"):
        source.excerpt(sample, "while")
    with pytest.raises(ValueError, match=r"from line 4 on contains 'docstring'"):
        source.excerpt(sample, "if y", "docstring")


def test_show_code_is_python_in_a_notebook_and_the_code_as_text():
    shown = source.show_code(sample, "return")
    assert repr(shown) == "return y"  # what nbval compares
    assert shown._repr_markdown_() == "```python\nreturn y\n```"
