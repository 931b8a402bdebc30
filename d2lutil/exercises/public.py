"""Checkers that the student edition ships as they are, since they hold no answer.

Notebook 5's shares of diffuse rows are right in a band, not at a value; the answer to
notebook 10's exercises is the lesson itself (a multi-head attention class, and a
behaviour test that catches a bug), judged against the library's public modules. There is
nothing to seal: the student edition builds them from here (``public_build``, with a
variant's values as ``public_args``), and grading adds cases the student never saw to
notebook 10's (``graded()``: other widths, another order).
"""

import torch

from d2lutil.attention import MultiHeadAttention
from d2lutil.bugs import LAYOUTS, RepeatNotInterleave
from d2lutil.exercises.answers import Wrong, as_array
from d2lutil.exercises.modules import LAYOUTS as LAYOUT_NAMES
from d2lutil.exercises.modules import Case, _maker, behaviour_test, implementation

CLASSES = {cls.__name__: cls for cls in (MultiHeadAttention, RepeatNotInterleave, *LAYOUTS)}
CAUSAL = ("no", "top-left", "bottom-right")  # how exercise 2's class masks the future


def causal_lens(valid_lens, batch_size, num_queries, num_keys, causal):
    """``valid_lens`` (None, per sequence or per query) with a causal mask folded in, per
    query, (batch_size, num_queries): query i sees keys 0 to i ("top-left", as SDPA's
    ``is_causal``) or 0 to i + num_keys - num_queries ("bottom-right", as FlashAttention's
    and a cache's), and never past its valid length."""
    offset = 0 if causal == "top-left" else num_keys - num_queries
    lens = (torch.arange(1, num_queries + 1) + offset).clamp(max=num_keys)
    lens = lens.expand(batch_size, num_queries)
    if valid_lens is None:
        return lens
    return torch.minimum(lens, valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens)


class TopLeft(MultiHeadAttention):
    """The library's class with a causal mask always on, aligned top-left: the reference of
    exercise 2's causal variants."""

    causal = "top-left"

    def forward(self, queries, keys, values, valid_lens=None):
        return super().forward(queries, keys, values, causal_lens(
            valid_lens, queries.shape[0], queries.shape[1], keys.shape[1], self.causal))


class BottomRight(TopLeft):
    """As :class:`TopLeft`, aligned bottom-right (to the last key)."""

    causal = "bottom-right"


REFERENCES = {"no": MultiHeadAttention, "top-left": TopLeft, "bottom-right": BottomRight}
CAUSAL_SAID = {"no": "does not mask the future",
               "top-left": "masks the future aligned top-left (query i sees keys 0 to i)",
               "bottom-right": "masks the future aligned bottom-right (query i sees keys 0 "
                               "to i + num_keys - num_queries)"}


def causal_slip(mine, asked):
    """What to say to a class that masks the future as ``mine`` says, not as ``asked``."""
    wanted = ("this version has no causal mask" if asked == "no" else
              f"your version asks for a causal mask aligned {asked}")
    return f"your class {CAUSAL_SAID[mine]}, and {wanted}"


def lens_cases():
    """num_hiddens = h * p for p in (2, 4) and h from 1 to 8: queries and keys of different
    lengths, batches of 1 and 3, valid_lens per sequence, per query and none."""
    cases = []
    for p in (2, 4):
        for h in range(1, 9):
            cases.append(Case(h * p, h, 3 if (h + p) % 2 else 1, 2 + h % 3, 3 + (h + p) % 4,
                              ("none", "sequence", "query")[(h + p) % 3], 100 * p + h))
    return cases


def hidden_lens_cases():
    """Grading's cases: odd head widths (p = 3, 5), other lengths and seeds."""
    return [Case(h * p, h, 2, 1 + h % 4, 2 + (h * p) % 5, ("query", "sequence", "none")[h % 3],
                 900 + 10 * p + h)
            for p in (3, 5) for h in (1, 2, 3, 5)]


def diagnose(cls):
    """The stage comparison on a small instance of the student's class, or a note why not."""
    from d2lutil import stages

    try:
        found = str(stages.first_departure(cls(8, 2, 0.0, bias=False)))
    except Exception as error:  # a class the comparison cannot run: say so, never raise
        return f"(the stage comparison could not run it: {type(error).__name__}: {error})"
    return (f"The stage comparison (d2lutil.stages) on your class with num_hiddens = 8, "
            f"num_heads = 2:\n{found}\n(end of the comparison)")


def _aligned(cases, causal, num_hiddens, num_heads):
    """``cases`` led by the variant's own sizes; bottom-right: no more queries than keys, so
    every query sees a key."""
    first = [Case(num_hiddens, num_heads, 2, 3, 5, lens, 40 + i)
             for i, lens in enumerate(("none", "query"))]
    return [case._replace(num_queries=case.num_keys, num_keys=case.num_queries)
            if causal == "bottom-right" and case.num_queries > case.num_keys else case
            for case in first + cases]


def class_checker(layout="any", causal="no", num_hiddens=8, num_heads=2):
    """Notebook 10, exercise 2: a class against the library's, stage by stage, in the
    ``layout`` asked (a key of ``modules.LAYOUTS``, or "any") and masking the future as
    ``causal`` says (one of CAUSAL); its messages speak of ``num_hiddens`` and
    ``num_heads`` first."""
    if layout != "any" and layout not in LAYOUT_NAMES:
        raise ValueError(f"layout must be 'any' or one of {sorted(LAYOUT_NAMES)}, got "
                         f"{layout!r}")
    if causal not in CAUSAL:
        raise ValueError(f"causal must be one of {CAUSAL}, got {causal!r}")
    check = implementation(
        REFERENCES[causal], lambda: _aligned(lens_cases(), causal, num_hiddens, num_heads),
        diagnose=diagnose if causal == "no" else None, layout=layout,
        mistakes=[(REFERENCES[other], causal_slip(other, causal))
                  for other in CAUSAL if other != causal],
        hidden=lambda: _aligned(hidden_lens_cases(), causal, num_hiddens, num_heads)[2:])
    check.public_build = "d2lutil.exercises.public:class_checker"
    check.public_args = {"layout": layout, "causal": causal, "num_hiddens": num_hiddens,
                         "num_heads": num_heads}
    return check


def layout_maker(name):
    """A case of the behaviour test: ``make_module`` of the class ``name`` (CLASSES)."""
    if name not in CLASSES:
        raise ValueError(f"name must be one of {sorted(CLASSES)}, got {name!r}")
    make_module = _maker(CLASSES[name])
    make_module.built_by = ("public", "layout_maker", (name,))
    return make_module


def test_checker():
    """Notebook 10, exercise 3: a test that fails the bug and passes every correct layout;
    grading calls it in another order."""
    check = behaviour_test(RepeatNotInterleave, [MultiHeadAttention, *LAYOUTS], seed=0,
                           hidden_seed=1, make=lambda cls: layout_maker(cls.__name__))
    check.public_build = "d2lutil.exercises.public:test_checker"
    return check


def diffuse_shares_checker():
    """Notebook 5, exercise 2: the shares of seeds whose row for e is diffuse at d = 16 and
    d = 256, each estimated over a few hundred seeds: right in a band, close to each
    other."""
    def check(answer):
        shares = as_array(answer).ravel()
        if shares.size != 2:
            raise Wrong(f"expected two shares (d = 16 and d = 256), got {shares.size} "
                        "numbers")
        if (shares > 1).any() or (shares < 0).any():
            raise Wrong("give shares between 0 and 1: the number of diffuse rows divided by "
                        "the number of seeds")
        if (shares > 0.995).any():
            raise Wrong("with a few hundred seeds some of e's rows are not diffuse: use "
                        "more seeds")
        for d, share in zip((16, 256), shares, strict=True):
            if not 0.9 <= share <= 0.99:
                raise Wrong(f"the share at d = {d} is not right")
        if abs(shares[0] - shares[1]) > 0.06:
            raise Wrong("the two shares differ by more than sampling noise explains")

    check.public_build = "d2lutil.exercises.public:diffuse_shares_checker"
    return check
