"""Tests of d2lutil.diagrams: the right labels, clear errors, one figure per call."""

import io

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from d2lutil import diagrams


def texts(fig):
    """Every non-empty string drawn on ``fig``."""
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def png_bytes(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=40, metadata={"Software": None})
    return buffer.getvalue()


@pytest.fixture(autouse=True)
def no_figure_leaks():
    """Every test closes what it opened: no figure is left behind."""
    before = set(plt.get_fignums())
    yield
    assert set(plt.get_fignums()) == before


def test_copy_both_task_shows_the_task():
    fig = diagrams.copy_both_task()
    try:
        assert isinstance(fig, Figure)
        drawn = texts(fig)
        joined = " ".join(drawn)
        for label in ("query", "readout", "target", "position 1", "position 2",
                      r"$\alpha_1$", r"$\alpha_2$", r"$\mathbf{m}$", r"$\mathbf{W}$",
                      r"$\mathbf{k}_1$", r"$\mathbf{k}_2$"):
            assert label in drawn, label
        # v1 and v2 appear at their positions and again as the two halves of the target.
        assert drawn.count(r"$\mathbf{v}_1$") == 2
        assert drawn.count(r"$\mathbf{v}_2$") == 2
        assert "width $d$" in drawn and "width $2d$" in drawn
        assert r"\alpha_1\mathbf{v}_1 + \alpha_2\mathbf{v}_2" in joined
    finally:
        plt.close(fig)


@pytest.mark.parametrize("num_heads", [1, 2, 3, 4])
def test_multihead_attention_draws_every_head_up_to_the_limit(num_heads):
    fig = diagrams.multihead_attention(num_heads)
    try:
        assert isinstance(fig, Figure)
        drawn = texts(fig)
        for i in range(1, num_heads + 1):
            assert f"head {i}" in drawn
            for sub in "qkv":
                assert rf"$\mathbf{{W}}_{sub}^{{({i})}}$" in drawn
        assert f"head {num_heads + 1}" not in drawn
        assert drawn.count("scaled\ndot-product\nattention") == num_heads
        for label in ("queries", "keys", "values", "concat", r"$\mathbf{W}_o$", "output"):
            assert drawn.count(label) == 1, label
        assert r"$\cdots$" not in drawn
    finally:
        plt.close(fig)


def test_multihead_attention_elides_the_middle_heads_when_there_are_many():
    num_heads = diagrams.MAX_DRAWN_HEADS + 4
    fig = diagrams.multihead_attention(num_heads=num_heads)
    try:
        drawn = texts(fig)
        heads = sorted(t for t in drawn if t.startswith("head "))
        assert heads == sorted(["head 1", "head 2", f"head {num_heads}"])
        assert drawn.count("scaled\ndot-product\nattention") == 3
        assert r"$\cdots$" in drawn
        assert f"$h = {num_heads}$ heads" in drawn
    finally:
        plt.close(fig)


def test_multihead_attention_names_a_bad_num_heads_and_opens_no_figure():
    with pytest.raises(ValueError, match="num_heads must be a positive int, got 0"):
        diagrams.multihead_attention(0)
    with pytest.raises(TypeError, match="num_heads must be a positive int, got float"):
        diagrams.multihead_attention(2.0)
    with pytest.raises(TypeError, match="num_heads must be a positive int, got bool"):
        diagrams.multihead_attention(True)


@pytest.mark.parametrize("draw", [diagrams.copy_both_task,
                                  lambda: diagrams.multihead_attention(3)])
def test_each_call_opens_one_figure_and_draws_the_same_picture(draw):
    before = set(plt.get_fignums())
    first = draw()
    assert set(plt.get_fignums()) - before == {first.number}
    second = draw()
    try:
        assert png_bytes(first) == png_bytes(second)
    finally:
        plt.close(first)
        plt.close(second)
    assert set(plt.get_fignums()) == before
