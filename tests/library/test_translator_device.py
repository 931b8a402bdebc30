"""Notebook 8's translator (``d2lutil.translator``) runs wherever its parameters are:
every tensor its code makes itself (positions, masks, the <bos> column) is made with
``device=``; so does the head lab that notebook 9 defines on it.

The model's code is the library's, the head lab's decoding too (``translator.pronounce``);
the head lab itself is notebook 9's own: the cells that define it are executed here
(nothing trained), and the tests below check that it takes any input without a traceback.
A CPU-only machine cannot see a tensor left on the CPU by mistake, so the tests watch
the factory functions instead: under ``RequireDevice``, a call of ``torch.arange``,
``torch.full``, ... from the translator's code without ``device=`` raises, as it would
meet the GPU's tensors on a GPU.
"""

import pathlib
import sys

import matplotlib
import nbformat
import pytest
import torch
from torch.overrides import TorchFunctionMode

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from d2lutil import translator  # noqa: E402

MODULE = pathlib.Path(translator.__file__).resolve()
NOTEBOOK = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "09_reading_the_heads.ipynb"
DEFINES = ("def head_values", "def head_lab")


class RequireDevice(TorchFunctionMode):
    """Raise on a tensor factory called from the translator's code without device=."""

    FACTORIES = {torch.arange, torch.full, torch.zeros, torch.ones, torch.empty,
                 torch.tensor, torch.randn, torch.rand}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        caller = sys._getframe(1).f_code.co_filename
        if func in self.FACTORIES and caller == str(MODULE) and "device" not in kwargs:
            raise AssertionError(f"d2lutil.translator calls torch.{func.__name__} "
                                 "without device=")
        return func(*args, **kwargs)


@pytest.fixture(scope="module")
def notebook():
    """The namespace of notebook 9's head-lab cells, with small vocabularies."""
    import d2lutil
    from d2lutil import pronunciations

    namespace = {"torch": torch, "d2lutil": d2lutil, "pronunciations": pronunciations,
                 "translator": translator, "greedy_decode": translator.greedy_decode,
                 "letters": pronunciations.letter_vocab(),
                 "phonemes": pronunciations.Vocab(["AE", "K", "T"], name="phonemes"),
                 "num_heads": 4, "plt": plt}
    cells = [c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells
             if c.cell_type == "code" and c.source.lstrip().startswith(DEFINES)]
    assert len(cells) == len(DEFINES), "the cells that define notebook 9's head lab were not found"
    for source in cells:
        exec(compile(source, str(NOTEBOOK), "exec"), namespace)
    return namespace


def small_model():
    torch.manual_seed(0)
    return translator.Translator(29, 6, 12, 6, num_hiddens=16, num_heads=4,
                                 ffn_num_hiddens=32).eval()


def test_a_factory_without_device_fails_here():
    code = compile("torch.arange(3)", str(MODULE), "eval")
    with RequireDevice(), pytest.raises(AssertionError, match="arange without device"):
        eval(code, {"torch": torch})
    with RequireDevice():
        eval(compile("torch.arange(3, device='cpu')", str(MODULE), "eval"), {"torch": torch})
        torch.arange(3)  # not the translator's code


def test_forward_and_loss_make_their_tensors_on_the_inputs_device():
    model = small_model()
    source = torch.zeros(2, 5, dtype=torch.long)
    decoder_input = torch.zeros(2, 4, dtype=torch.long)
    with RequireDevice():
        logits = model(source, torch.tensor([5, 3]), decoder_input)
        loss = translator.sequence_loss(logits, decoder_input, torch.tensor([4, 2]))
    assert logits.shape == (2, 4, 6) and loss.ndim == 0


def test_greedy_decode_makes_its_bos_column_with_device(notebook):
    # (its letters come from encode_words on the CPU: on a GPU they need .to(device))
    model, words = small_model(), ["cat", "attack"]
    letters, phonemes = notebook["letters"], notebook["phonemes"]
    with RequireDevice():  # (test_translator.py compares the two)
        for use_cache in (True, False):
            translator.greedy_decode(model, words, letters, phonemes, use_cache=use_cache)


def test_pronounce_makes_its_mask_and_tokens_with_device(notebook):
    model, letters, phonemes = small_model(), notebook["letters"], notebook["phonemes"]
    with RequireDevice():
        lab = translator.pronounce(model, "cattle", letters, phonemes, heads_off=[1, 2])
    assert lab.heads_off == [1, 2] and lab.weights.shape[0] == 4


@pytest.fixture
def lab(notebook):
    notebook["model"] = small_model()
    yield notebook["head_lab"]
    plt.close("all")


def test_the_head_lab_pronounces_and_draws_a_made_up_word(lab, capsys):
    said = lab("cim")
    assert isinstance(said, list) and all(isinstance(p, str) for p in said)
    assert capsys.readouterr().out.startswith("cim: ")
    assert len(plt.gcf().axes) >= 4  # a map per head (and a colour bar)
    assert isinstance(lab("cim", heads_off=[0, 2], values=True), list)
    assert "(heads [0, 2] off)" in capsys.readouterr().out


@pytest.mark.parametrize("word, heads_off, message", [
    ("Cell", (), "ValueError: words must be 3 to 12 lower-case letters a-z"),
    ("abcdefghijklm", (), "ValueError: words must be 3 to 12 lower-case letters a-z"),
    (3, (), "TypeError: word must be a str, got int"),
    (["cell"], (), "TypeError: word must be a str, got list"),
    ("cell", [4], "ValueError: heads_off must be heads 0 to 3, got [4]"),
    ("cell", -1, "ValueError: heads_off must be heads 0 to 3, got [-1]"),
    ("cell", "2", "TypeError: heads_off must be an int or a sequence of ints, got str"),
    ("cell", 2.0, "TypeError: heads_off must be an int or a sequence of ints, got float"),
    ("cell", [0, None], "TypeError: heads_off must hold ints, got NoneType")])
def test_the_head_lab_prints_the_librarys_reason_for_a_bad_argument(lab, capsys, word,
                                                                   heads_off, message):
    assert lab(word, heads_off=heads_off) is None
    out = capsys.readouterr().out
    assert out.startswith(message) and "Traceback" not in out


def titles():
    return [ax.get_title() for ax in plt.gcf().axes if ax.get_title()]


def test_the_head_lab_takes_one_head_or_several_and_marks_them_off(lab, capsys):
    assert isinstance(lab("cim", heads_off=2), list)
    assert capsys.readouterr().out.rstrip().endswith("(heads [2] off)")
    assert titles() == ["head 0", "head 1", "head 2 (off)", "head 3"]
    plt.close("all")
    lab("cim", heads_off=(3, 1))
    assert titles() == ["head 0", "head 1 (off)", "head 2", "head 3 (off)"]
    plt.close("all")
    lab("cim")
    assert titles() == ["head 0", "head 1", "head 2", "head 3"]


def test_the_head_lab_shows_a_pronunciation_cut_at_the_longest_target(notebook, capsys):
    """The model says K for ever: decoding stops at its cap (6 tokens), without <eos>."""
    model = small_model()
    phonemes = notebook["phonemes"]
    with torch.no_grad():
        model.output.bias[phonemes.index["K"]] = 100.0
    notebook["model"] = model
    try:
        for values in (False, True):
            said = notebook["head_lab"]("cimcimcimcim", values=values)
            assert said == ["K"] * 6
            out = capsys.readouterr().out
            assert out == "cimcimcimcim: K K K K K K (cut at 6 phonemes)\n"
            heatmap = plt.gcf().axes[0]
            labels = [t.get_text() for t in heatmap.get_yticklabels()]
            assert labels == ["K"] * 6  # a row per phoneme said, no <eos> row
            plt.close("all")
        notebook["head_lab"]("cimcim", heads_off=0)
        assert capsys.readouterr().out == ("cimcim: K K K K K K (cut at 6 phonemes) "
                                           "(heads [0] off)\n")
    finally:
        plt.close("all")
