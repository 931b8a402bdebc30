"""tools/widgets.py: the browser versions of the chapter's three widgets, held to PyTorch.

Every export runs here in ONNX Runtime (Python; the page runs the same graph with ONNX
Runtime Web): the head lab's translator of each shipped seed, decoded by the page's greedy
loop (``browser_pronounce``) on a word list with heads on and off, gives what
``translator.pronounce`` gives (phonemes, cut, weights, the value-weighted maps and the
logits), and the alignment's graph gives ``alignment.alignment_weights``. Each export runs
once per seed under warnings-as-errors, as ``make test`` runs everything
(pyproject.toml's ``filterwarnings``). The data the pages read (``page_data``) are held to
Python's own messages, notebook 1's stored output, d2lutil's vocabularies and the plotting
module's colour map. The pages themselves run in tests/browser/.
"""

import math
import re
import warnings

import matplotlib
import numpy as np
import onnxruntime
import pytest
import torch
from nbformat.v4 import new_code_cell

import book
import chapter
import widgets
from d2lutil import alignment, plotting, pronunciations, translator
from d2lutil.tasks import one_thread

# The tolerances the issue sets: the page shows these numbers, so they must be PyTorch's.
WEIGHTS_ATOL = 1e-5  # cross-attention weights and value-weighted maps
LOGITS_ATOL = 1e-4
ALIGNMENT_ATOL = 1e-6
# Beyond each seed's test words: the notebooks' own words, the lab's first word, a silent
# letter, words a translator never ends (cut at the longest target; each seed cuts one of
# the two), both length limits.
EXTRA_WORDS = ["attention", "translation", "knight", "cim", "yyyyyyyyyyyy", "xxxxxxxxxxxx",
               "ohm", "cat", "abolitionist", "straightened"]
NUM_TEST_WORDS = 25
HEADS_OFF = [(), (0,), (1, 3), (2,), (0, 1, 2, 3)]


@pytest.fixture(scope="module")
def dictionary():
    return widgets.dictionary()  # entries, letters, phonemes


@pytest.fixture(scope="module")
def data():
    return widgets.page_data()


def export_quietly(export, *args):
    """``export(*args)`` with every warning an error, as ``make test`` runs it."""
    with warnings.catch_warnings(), one_thread():
        warnings.simplefilter("error")
        return export(*args)


def session(onnx_bytes):
    """An ONNX Runtime session on one thread, as the page runs it."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(onnx_bytes, options,
                                        providers=["CPUExecutionProvider"])


@pytest.fixture(scope="module", params=translator.SHIPPED_SEEDS, ids=lambda s: f"seed{s}")
def lab(request, dictionary):
    """(seed, model, test words, ONNX session) of one shipped seed, exported once."""
    entries, letters, phonemes = dictionary
    model, test_words = translator.shipped(request.param, entries, letters, phonemes)
    onnx_bytes = export_quietly(widgets.export_translator, model)
    return request.param, model, test_words, session(onnx_bytes)


def browser_pronounce(run, word, heads_off, lab_data):
    """The page's greedy loop: from <bos>, run the whole decoder input at every step and
    append the argmax of the last row's logits; stop after <eos> or after
    ``max_target_len`` steps. Returns the phonemes said, cut, and the last run's outputs
    and decoder input (the rows of the maps)."""
    source = np.array([[lab_data["letters"][ch] for ch in word]], dtype=np.int64)
    mask = np.array([0.0 if h in heads_off else 1.0 for h in range(lab_data["num_heads"])],
                    dtype=np.float32)
    tokens = [lab_data["bos"]]
    for _ in range(lab_data["max_target_len"]):
        decoder_input = np.array([tokens], dtype=np.int64)
        logits, weights, value_weighted = run(None, {
            "source": source, "source_valid_lens": np.array([len(word)], dtype=np.int64),
            "decoder_input": decoder_input, "head_mask": mask})
        tokens.append(int(logits[0, -1].argmax()))
        if tokens[-1] == lab_data["eos"]:
            break
    ids = tokens[1:]
    said = [lab_data["phonemes"][i] for i in ids if i != lab_data["eos"]]
    return {"said": said, "cut": lab_data["eos"] not in ids, "logits": logits[0],
            "weights": weights[0], "value_weighted": value_weighted[0],
            "decoder_input": decoder_input}


def word_list(test_words):
    step = len(test_words) // NUM_TEST_WORDS
    return test_words[::step][:NUM_TEST_WORDS] + EXTRA_WORDS


def max_diff(got, expected):
    return float(np.abs(np.asarray(got) - np.asarray(expected)).max())


def lab_diffs(lab, dictionary, lab_data):
    """Compare every word of ``word_list`` at every ``HEADS_OFF``; return the mismatches
    (a list of strings) and the largest differences (a dict). PyTorch on one thread: tiny
    tensors, and two threads on a busy machine are ten times slower."""
    with one_thread():
        return _lab_diffs(lab, dictionary, lab_data)


def _lab_diffs(lab, dictionary, lab_data):
    seed, model, test_words, onnx = lab
    _, letters, phonemes = dictionary
    num_heads = model.decoder.cross_attention.num_heads
    wrong, largest = [], {"weights": 0.0, "value_weighted": 0.0, "logits": 0.0}
    for word in word_list(test_words):
        source, valid_lens = pronunciations.encode_words([word], letters)
        added = translator.head_values(model, source)[0]  # (h, S, num_hiddens)
        for off in HEADS_OFF:
            case = f"seed {seed}, {word!r}, heads_off={list(off)}"
            expected = translator.pronounce(model, word, letters, phonemes, off)
            got = browser_pronounce(onnx.run, word, off, lab_data)
            if (got["said"], got["cut"]) != (expected.said, expected.cut):
                wrong.append(f"{case}: said {got['said']} (cut {got['cut']}), PyTorch "
                             f"{expected.said} (cut {expected.cut})")
                continue
            mask = torch.tensor([0.0 if h in off else 1.0 for h in range(num_heads)])
            with torch.no_grad():
                logits = model(source, valid_lens, torch.from_numpy(got["decoder_input"]),
                               head_mask=mask)[0]
            references = {"weights": expected.weights,
                          "value_weighted": translator.value_weighted(expected.weights, added),
                          "logits": logits}
            for name, reference in references.items():
                if got[name].shape != tuple(reference.shape):
                    wrong.append(f"{case}: {name} of shape {got[name].shape}, PyTorch "
                                 f"{tuple(reference.shape)}")
                    continue
                diff = max_diff(got[name], reference)
                largest[name] = max(largest[name], diff)
                if diff > (LOGITS_ATOL if name == "logits" else WEIGHTS_ATOL):
                    wrong.append(f"{case}: {name} differ by {diff:.2e}")
    return wrong, largest


# --- the exports, held to PyTorch ----------------------------------------------------------

def test_lab_export_pronounces_as_pytorch(lab, dictionary, data):
    wrong, _ = lab_diffs(lab, dictionary, data["head-lab"])
    assert not wrong, f"{len(wrong)} mismatches, e.g.\n" + "\n".join(wrong[:10])


def test_lab_export_has_the_pages_names(lab):
    onnx = lab[3]
    assert [i.name for i in onnx.get_inputs()] == ["source", "source_valid_lens",
                                                    "decoder_input", "head_mask"]
    assert [o.name for o in onnx.get_outputs()] == ["logits", "weights", "value_weighted"]


def test_lab_word_list_reaches_the_limits(lab, dictionary, data):
    """The word list holds both length limits and a cut word, so the comparison covers
    them (a cut word may change with the weights: then pick another)."""
    seed, model, test_words, onnx = lab
    words = word_list(test_words)
    lab_data = data["head-lab"]
    assert {lab_data["min_letters"], lab_data["max_letters"]} <= {len(w) for w in words}
    _, letters, phonemes = dictionary
    with one_thread():
        cut = [w for w in EXTRA_WORDS if translator.pronounce(model, w, letters, phonemes).cut]
    assert cut, f"seed {seed}: no word of EXTRA_WORDS is cut any more"


ALIGNMENT_PAIRS = [("a", "a"), ("a", "b"), ("kite", "attack"), ("attention", "translation"),
                   ("aaaa", "a"), ("a", "aaaaaaaaaaaaaaa"), ("mississippi", "ssss"),
                   ("zzzzzzzzzzzzzzz", "abcdefghijklmno"), ("abcdefghijklmno", "z"),
                   ("Kite", "ATTACK"), ("queue", "queueing"), ("ab", "ba"),
                   ("letter", "tttttttttttttt"), ("xylophone", "phonology"), ("eerie", "e"),
                   ("q", "quizzically"), ("bookkeeper", "keeper"), ("head", "heads"),
                   ("oo", "o"), ("alignment", "heatmap"), ("abcabcabcabcabc", "cab")]


@pytest.fixture(scope="module")
def alignment_session():
    return session(export_quietly(widgets.export_alignment))


def letter_numbers(word):
    return np.array([alignment.ALPHABET.index(ch) for ch in word.lower()], dtype=np.int64)


def alignment_diffs(alignment_session):
    diffs = {}
    for query_word, key_word in ALIGNMENT_PAIRS:
        (got,) = alignment_session.run(None, {"query": letter_numbers(query_word),
                                              "key": letter_numbers(key_word)})
        expected = alignment.alignment_weights(query_word, key_word)
        assert got.shape == tuple(expected.shape), (query_word, key_word)
        diffs[query_word, key_word] = max_diff(got, expected)
    return diffs


def test_alignment_export_equals_alignment_weights(alignment_session):
    assert [i.name for i in alignment_session.get_inputs()] == ["query", "key"]
    assert [o.name for o in alignment_session.get_outputs()] == ["weights"]
    assert {len(w) for pair in ALIGNMENT_PAIRS for w in pair} >= {1, 15}
    diffs = alignment_diffs(alignment_session)
    far = {pair: diff for pair, diff in diffs.items() if diff > ALIGNMENT_ATOL}
    assert not far, f"the export differs from alignment_weights: {far}"


# --- the data the pages read -----------------------------------------------------------------

def filled(template, word, bad=None):
    """``template`` filled as the page fills it: Python's repr of the input (and of the
    list of bad letters)."""
    text = template.replace("{word}", repr(word))
    return text if bad is None else text.replace("{bad}", repr(bad))


def python_message(call, *args):
    try:
        call(*args)
    except (TypeError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
    return None


def assert_message(template, message, word, bad=None):
    """``message`` is ``template`` filled with ``word`` (and ``bad``); where Python's repr
    of either takes double quotes (``"it's"``), only that the template is used."""
    pattern = re.escape(template).replace(r"\{word\}", ".+").replace(r"\{bad\}", ".+")
    assert re.fullmatch(pattern, message), (template, message)
    if repr(word).startswith("'") and (bad is None or '"' not in repr(bad)):
        assert filled(template, word, bad) == message


LAB_BAD_WORDS = ["", "ab", "123", "c1m", "c m", " cim", "Cim", "CIM", "abcdefghijklm", "it's",
                 "naïve", "cim\n"]


@pytest.fixture(scope="module")
def seed_0(dictionary):
    entries, letters, phonemes = dictionary
    return translator.shipped(0, entries, letters, phonemes)[0]


@pytest.mark.parametrize("word", LAB_BAD_WORDS)
def test_lab_message_is_pythons(word, data, dictionary, seed_0):
    """What notebook 9's head_lab prints for a word pronounce refuses."""
    _, letters, phonemes = dictionary
    message = python_message(translator.pronounce, seed_0, word, letters, phonemes)
    assert message is not None, f"pronounce accepts {word!r}"
    assert_message(data["head-lab"]["message"], message, word)


def bad_letters(word):
    return sorted({ch for ch in word.lower() if ch not in alignment.ALPHABET})


ALIGNMENT_BAD_WORDS = ["", "k1te", "123", "two words", " kite", "it's", "kite!", "naïve"]


@pytest.mark.parametrize("word", ALIGNMENT_BAD_WORDS)
@pytest.mark.parametrize("side", ["query", "key"])
def test_alignment_message_is_pythons(side, word, data):
    """What alignment_weights raises, as notebook 5's show_alignment catches it."""
    words = (word, "attack") if side == "query" else ("kite", word)
    message = python_message(alignment.alignment_weights, *words)
    assert message is not None
    names = data["alignment"]
    empty, letters = ("empty", "letters") if side == "query" else ("key_empty", "key_letters")
    if word:
        assert_message(names[letters], message, word, bad_letters(word))
    else:
        assert_message(names[empty], message, word)


@pytest.mark.parametrize("words", [("Kite", "ATTACK"), ("abcdefghijklm", "a"), ("a", "b")])
def test_alignment_takes_what_the_lab_refuses(words):
    """Capitals, one letter and long words are not errors for the alignment: the page must
    draw them (lower-cased), not refuse them."""
    assert python_message(alignment.alignment_weights, *words) is None


def test_alignment_data(data):
    names = data["alignment"]
    assert names["alphabet"] == alignment.ALPHABET
    assert names["names"] == ["query_word", "key_word"]
    assert names["value"] == ["kite", "attack"]  # notebook 5's widget cell
    for query_word, key_word in [names["value"]]:
        assert python_message(alignment.alignment_weights, query_word, key_word) is None


def stored_notebook(name):
    return book.read(book.ROOT / book.CHAPTER_DIR / book.WIDGETS[name])


def test_split_lines_are_show_splits(data):
    split = data["split"]
    nb = stored_notebook("split")
    slider_cell = next(c.source for c in nb.cells if c.cell_type == "code"
                       and "FloatSlider(" in c.source)
    numbers = dict(re.findall(r"(value|min|max|step)=([\d.]+)", slider_cell))
    assert {k: split[k] for k in numbers} == {k: float(v) for k, v in numbers.items()}
    assert split["label"] == re.search(r'description="([^"]*)"', slider_cell)[1]
    stops = [f"{0.5 + 0.05 * i:.2f}" for i in range(11)]
    assert list(split["lines"]) == stops
    stored = {}
    for cell in nb.cells:
        called = re.fullmatch(r"show_split\((0\.\d+)\)", cell.source.strip())
        if cell.cell_type == "code" and called:
            stored[f"{float(called[1]):.2f}"] = "".join(
                o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    assert "0.95" in stored, "notebook 1 no longer calls show_split(0.95)"
    for stop, text in stored.items():
        assert split["lines"][stop] == text.rstrip("\n")
    for stop, line in split["lines"].items():
        a1 = float(stop)
        assert line.startswith(f"weights ({a1:.2f}, {1 - a1:.2f}), ")
        errors = re.search(r"relative error (\d+\.\d+) in-sample, (\d+\.\d+) held-out", line)
        assert errors, line
        assert all(abs(float(e) - math.sqrt(0.5)) < 0.015 for e in errors.groups()), line


def test_lab_data_is_d2lutils(data, dictionary, seed_0):
    entries, letters, phonemes = dictionary
    lab_data = data["head-lab"]
    assert lab_data["letters"] == {ch: letters.index[ch] for ch in pronunciations.LETTERS}
    assert lab_data["phonemes"] == phonemes.tokens
    assert (lab_data["bos"], lab_data["eos"], lab_data["pad"]) == (
        phonemes.bos, phonemes.eos, letters.pad)
    assert (lab_data["min_letters"], lab_data["max_letters"]) == (
        pronunciations.MIN_LETTERS, pronunciations.MAX_LETTERS)
    assert lab_data["max_target_len"] == seed_0.position.num_embeddings
    assert lab_data["num_heads"] == seed_0.decoder.cross_attention.num_heads
    assert lab_data["seeds"] == list(translator.SHIPPED_SEEDS)
    assert lab_data["value"] == "cim"  # notebook 9's widget cell
    assert python_message(pronunciations.encode_words, [lab_data["value"]], letters) is None


def test_colours_are_the_heatmaps(data):
    """256 colours from 0 to 1, read from a map drawn by d2lutil's show_heatmaps."""
    figure = plotting.show_heatmaps(np.zeros((1, 1, 2, 2)), vmax=1.0)
    try:
        image = figure.axes[0].images[0]
        cmap = image.get_cmap()
        assert (image.norm.vmin, image.norm.vmax) == (0.0, 1.0)
    finally:
        matplotlib.pyplot.close(figure)
    assert data["colours"] == [matplotlib.colors.to_hex(cmap(i)) for i in range(256)]


# --- the tags and the placeholder ------------------------------------------------------------

def test_widget_html_names_the_widget():
    html = chapter.widget_html("head-lab", "../_static/widgets/")
    assert '<div class="chapter-widget" data-widget="head-lab"></div>' in html
    assert '<script src="../_static/widgets/widgets.js"></script>' in html
    with pytest.raises(ValueError, match=r"name must be .*\['alignment', 'head-lab', "
                       r"'split'\], got 'slider'$"):
        chapter.widget_html("slider", "")


def test_widget_name_reads_the_tag():
    assert book.widget_name(new_code_cell(metadata={"tags": [
        "nbval-ignore-output", "widget-head-lab"]})) == "head-lab"
    assert book.widget_name(new_code_cell(metadata={"tags": ["live-reshape"]})) is None
    assert book.widget_name(new_code_cell()) is None


@pytest.mark.parametrize("name", sorted(book.WIDGETS))
def test_each_widget_cell_is_tagged(name):
    nb = stored_notebook(name)
    tagged = [i for i, c in enumerate(nb.cells) if book.WIDGET_PREFIX + name in book.tags(c)]
    assert len(tagged) == 1, (f"{book.WIDGETS[name]}: cells {tagged} are tagged "
                              f"{book.WIDGET_PREFIX + name!r}; exactly one must be")
    cell = nb.cells[tagged[0]]
    assert cell.cell_type == "code" and book.widget_name(cell) == name
    assert any(book.WIDGET_MIME in o.get("data", {}) for o in cell.outputs), (
        f"{book.WIDGETS[name]}: cell {tagged[0]}, tagged {book.WIDGET_PREFIX + name!r}, "
        "holds no widget output")


def test_the_page_script_computes_no_model():
    """widgets.js draws and looks up: every number a map shows is an export's output. Its
    code (comments aside) uses no exponential, logarithm, root or power, which a softmax
    or a layer would need."""
    text = (book.ROOT / "site" / "widgets" / "widgets.js").read_text(encoding="utf-8")
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    assert set(re.findall(r"Math\.(\w+)", code)) <= {"floor", "min", "max", "round", "abs"}
    assert not re.search(r"\*\*|\bexp\b|softmax|tanh|sqrt", code, flags=re.I)
