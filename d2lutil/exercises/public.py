"""Checkers that the student edition ships as they are, since they hold no answer.

Notebook 5's shares of diffuse rows are right in a band, not at a value; the answer to
notebook 10's exercises is the lesson itself (a multi-head attention class, and a
behaviour test that catches a bug), judged against the library's public modules. There is
nothing to seal: the student edition builds them from here (``public_build``), and grading
adds cases the student never saw to notebook 10's (``graded()``: other widths, another
order).
"""

from d2lutil.attention import MultiHeadAttention
from d2lutil.bugs import LAYOUTS, RepeatNotInterleave
from d2lutil.exercises.answers import Wrong, as_array
from d2lutil.exercises.modules import Case, _maker, behaviour_test, implementation

CLASSES = {cls.__name__: cls for cls in (MultiHeadAttention, RepeatNotInterleave, *LAYOUTS)}


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


def class_checker():
    """Notebook 10, exercise 2: a class against the library's, stage by stage."""
    check = implementation(MultiHeadAttention, lens_cases, diagnose=diagnose,
                           hidden=hidden_lens_cases)
    check.public_build = "d2lutil.exercises.public:class_checker"
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
