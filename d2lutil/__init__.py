"""Helpers for a D2L-style chapter on multi-head and cross-attention.

Modules, one per concern:

* ``d2lutil.attention``: ``masked_softmax``, ``DotProductAttention``,
  ``MultiHeadAttention``, ``KVCache`` (the chapter's attention core);
* ``d2lutil.shapes``: ``check_shape`` and argument validation;
* ``d2lutil.plotting``: the chapter's figure style and heatmap grids;
* ``d2lutil.tasks``: the copy-both task, as two positions (notebooks 1 and 2) and
  as a sequence (notebooks 6 and 7) with its model, and least-squares readouts;
* ``d2lutil.cost``: parameter and FLOP counts, forward/backward timing (notebook 3);
* ``d2lutil.alignment``: letter embeddings and the regimes of an alignment row
  (notebook 5);
* ``d2lutil.pronunciations``: the CMU Pronouncing Dictionary as a spelling-to-sound
  task: reading, split, vocabularies, padded batches, error rates (notebook 8);
* ``d2lutil.letter_sound``: which letters spell which phonemes, a letter-to-phoneme
  aligner fitted by EM (notebook 9);
* ``d2lutil.translator``: the spelling-to-sound translator, its loss, schedule,
  training loop and greedy decoding (notebook 8 shows it and runs its first steps;
  notebooks 8 and 9 load the weights it ships for seeds 0-5, made by
  ``tools/make_weights.py``);
* ``d2lutil.diagrams``: block diagrams of the copy-both task and of multi-head
  attention (notebooks 1 and 3);
* ``d2lutil.masks``: converters between the mask conventions (the book's
  ``valid_lens``, SDPA's boolean mask, an additive mask, ``key_padding_mask``);
* ``d2lutil.bugs``: the bugs learners make in multi-head attention, one module each;
* ``d2lutil.behaviour``: behaviour tests for any attention module with the book's
  interface (the bugs pass a shape check, not these);
* ``d2lutil.stages``: compare a module with a correct one stage by stage and name the
  first stage that departs;
* ``d2lutil.source``: ``show_code``, a few lines of the library's own code shown where a
  notebook discusses them (notebooks 6, 7, 8 and 10);
* ``d2lutil.exercises``: exercises that answer back (``check``, ``hint``,
  ``solution``); the questions of notebook NN are in ``d2lutil.exercises.nbNN``.

All but the first two and ``show_code`` are imported on demand: ``from d2lutil import tasks``; the
names ``plot_lines``, ``show_heatmaps`` and ``use_chapter_style`` import
``d2lutil.plotting`` (and matplotlib) when first used.

``d2lutil`` needs only torch, numpy and matplotlib; it never imports d2l or
torchvision, so importing it costs little more than importing torch.
"""

from .attention import DotProductAttention, KVCache, MultiHeadAttention, masked_softmax
from .shapes import check_shape
from .source import show_code

#: Imported on first use, from ``d2lutil.plotting``: matplotlib's pyplot costs a notebook
#: without figures (8 and 10) about a third of a second of a 2-core laptop's time.
_PLOTTING = ("plot_lines", "show_heatmaps", "use_chapter_style")


def __getattr__(name):
    if name in _PLOTTING:
        from . import plotting

        return getattr(plotting, name)
    raise AttributeError(f"module 'd2lutil' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_PLOTTING})


__all__ = [
    "DotProductAttention",
    "KVCache",
    "MultiHeadAttention",
    "check_shape",
    "masked_softmax",
    "plot_lines",
    "show_code",
    "show_heatmaps",
    "use_chapter_style",
]
__version__ = "0.1.0"
