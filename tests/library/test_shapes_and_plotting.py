"""Tests of d2lutil.shapes.check_shape and d2lutil.plotting."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from d2lutil import check_shape, plot_lines, show_heatmaps
from d2lutil.plotting import CHAPTER_STYLE, to_numpy, use_chapter_style


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_check_shape_accepts_the_right_shape_and_returns_nothing():
    assert check_shape(torch.zeros(2, 3), (2, 3)) is None
    assert check_shape(torch.zeros(2, 3), torch.Size([2, 3])) is None


def test_check_shape_names_both_shapes():
    with pytest.raises(ValueError, match=r"expected shape \(2, 4\), got \(2, 3\)"):
        check_shape(torch.zeros(2, 3), (2, 4))
    with pytest.raises(TypeError, match="tensor must be a torch.Tensor"):
        check_shape(np.zeros((2, 3)), (2, 3))


def test_to_numpy_detaches_and_converts():
    x = torch.ones(2, requires_grad=True) * 3
    assert isinstance(to_numpy(x), np.ndarray)
    assert to_numpy(x).tolist() == [3.0, 3.0]
    assert to_numpy([1, 2]).dtype == float


def test_show_heatmaps_uses_one_colour_scale_and_one_colour_bar():
    matrices = torch.rand(2, 3, 4, 5)
    matrices[1, 2, 0, 0] = 2.5
    fig = show_heatmaps(matrices, titles=[[f"{i}{j}" for j in range(3)] for i in range(2)])
    images = [im for ax in fig.axes for im in ax.get_images()]
    assert len(images) == 6
    assert {im.get_clim() for im in images} == {(0.0, 2.5)}
    assert len(fig.axes) == 7  # six panels and one colour bar
    assert fig.axes[0].get_title() == "00"


def test_show_heatmaps_puts_tick_labels_on_the_panels():
    fig = show_heatmaps(torch.rand(1, 1, 2, 3), xticklabels="abc", yticklabels="xy")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x", "y"]


def test_show_heatmaps_rejects_bad_input():
    with pytest.raises(ValueError, match="matrices must be 4-D"):
        show_heatmaps(torch.rand(3, 4))
    with pytest.raises(ValueError, match="titles must be 1 lists of 2 strings"):
        show_heatmaps(torch.rand(1, 2, 3, 3), titles=[["a"]])


def test_plot_lines_draws_each_curve_with_a_legend():
    ax = plot_lines([0, 1, 2], {"a": [1, 2, 3], "b": torch.tensor([3.0, 2, 1])},
                    xlabel="x", ylabel="y", title="t", logx=True, logy=True, hline=1.5,
                    hline_label="ref")
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b", "ref"]
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
    assert ax.get_xlabel() == "x" and ax.get_title() == "t"
    assert ax.get_legend() is not None


def test_use_chapter_style_sets_the_fonts():
    with plt.rc_context():
        use_chapter_style()
        assert plt.rcParams["font.size"] == CHAPTER_STYLE["font.size"]


def test_every_figure_of_a_notebook_is_shown():
    """In a fresh Jupyter kernel each helper's figure is stored, not only the first."""
    nbformat = pytest.importorskip("nbformat")
    import book

    calls = [
        "_ = d2lutil.plot_lines([0, 1], {'a': [0, 1]}, xlabel='x', ylabel='y')",
        "_ = d2lutil.show_heatmaps([[[[0, 1], [1, 0]]]])",
        "_ = d2lutil.plot_lines([1, 2], {'a': [0, 1]}, xlabel='x', ylabel='y', logx=True)",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import d2lutil")]
    nb.cells += [nbformat.v4.new_code_cell(call) for call in calls]
    book.notebook_client(nb, book.ROOT / "x.ipynb").execute()  # in the repository root
    shown = [sum("image/png" in out.get("data", {}) for out in cell.outputs)
             for cell in nb.cells[1:]]
    assert shown == [1, 1, 1]
