"""tests/notebooks/seedshift.py (every seed shifted by K) and tests/notebooks/robust.py (the
notebooks' asserts under shifted seeds), the latter on the demo chapter of
tests/demo_chapter.py."""

import io
import random

import nbformat
import numpy as np
import pytest
import torch
from nbformat.v4 import new_code_cell, new_markdown_cell

import book
import demo_chapter
import robust
import seedshift
from d2lutil import alignment, tasks


@pytest.fixture
def shifted():
    """``shifted(k)`` installs the shift; whatever happens, the originals come back."""
    yield seedshift.install
    seedshift.uninstall()
    assert torch.Generator is torch._C.Generator and seedshift.installed_k() == 0


# Each seeding function: (draw with seed s) -> a value, through the module attributes a
# notebook uses, so that installing the shift changes what they do.
DRAWS = {
    "torch.manual_seed": lambda s: (torch.manual_seed(s), torch.rand(3))[1].tolist(),
    "torch.random.manual_seed": lambda s: (torch.random.manual_seed(s),
                                           torch.rand(3))[1].tolist(),
    "torch.Generator().manual_seed": lambda s: torch.rand(
        3, generator=torch.Generator().manual_seed(s)).tolist(),
    "numpy.random.default_rng": lambda s: np.random.default_rng(s).random(3).tolist(),
    "numpy.random.seed": lambda s: (np.random.seed(s), np.random.rand(3))[1].tolist(),
    "numpy.random.RandomState": lambda s: np.random.RandomState(s).rand(3).tolist(),
    "RandomState.seed": lambda s: (lambda r: (r.seed(s), r.rand(3))[1])(
        np.random.RandomState()).tolist(),
    "random.seed": lambda s: (random.seed(s), random.random())[1],
    "random.Random": lambda s: random.Random(s).random(),
    "d2lutil (numpy inside)": lambda s: tasks.sample_values(2, 3, seed=s).tolist(),
    "d2lutil (torch.Generator inside)": lambda s: alignment.letter_embeddings(3, s).tolist(),
}


@pytest.mark.parametrize("name", DRAWS)
@pytest.mark.parametrize("k", [1, 5])
def test_every_seeding_function_is_shifted_by_k(shifted, name, k):
    draw = DRAWS[name]
    plain = {s: draw(s) for s in (3, 3 + k)}
    assert plain[3] != plain[3 + k]  # else the comparison below shows nothing
    shifted(k)
    assert draw(3) == plain[3 + k]


def test_shifted_functions_keep_unshiftable_seeds_and_reach_later_imports(shifted):
    sequence = np.random.SeedSequence(7)
    expected = np.random.default_rng(sequence).random()
    shifted(2)
    from torch import manual_seed  # imported after install: the shifted function

    assert manual_seed is torch.manual_seed and manual_seed.__wrapped__ is not None
    assert np.random.default_rng(np.random.SeedSequence(7)).random() == expected
    np.random.default_rng(None)
    np.random.seed(None)
    random.seed(None)
    random.seed("a")
    assert torch.manual_seed(0) is torch.default_generator
    assert torch.initial_seed() == 2


def test_shift_wraps_within_a_seeds_range(shifted):
    state_of_2 = np.random.RandomState(2).get_state()[1][0]
    shifted(3)
    assert seedshift.shift(2**64 - 1, 2**64) == 2
    assert seedshift.shift(2**32 - 2, 2**32) == 1
    assert seedshift.shift(True) is True and seedshift.shift(None) is None
    assert seedshift.shift(np.int64(4)) == 7
    torch.manual_seed(2**64 - 2)  # would be out of torch's range unwrapped
    assert torch.initial_seed() == 1
    np.random.seed(2**32 - 1)
    assert np.random.get_state()[1][0] == state_of_2


def test_shifted_generator_is_still_a_torch_generator(shifted):
    before = torch.Generator()
    shifted(1)
    generator = torch.Generator(device="cpu").manual_seed(0)
    assert type(generator) is not torch._C.Generator  # the subclass
    assert generator.initial_seed() == 1
    for g in (generator, before, torch.default_generator):
        assert isinstance(g, torch.Generator)
    assert issubclass(torch._C.Generator, torch.Generator)
    assert isinstance(np.random.mtrand._rand, np.random.RandomState)
    assert isinstance(random._inst, random.Random)
    # torch's functions take it as a generator; d2lutil's isinstance check accepts it
    reference = torch._C.Generator().manual_seed(1)
    assert torch.equal(torch.randn(4, generator=generator), torch.randn(4, generator=reference))
    assert torch.equal(torch.randperm(6, generator=generator),
                       torch.randperm(6, generator=reference))
    values, _ = tasks.sample_sequence_copy(2, 3, 4, generator=generator)
    assert torch.equal(values, torch.randn(2, 3, 4, generator=reference))


def test_install_checks_k():
    with pytest.raises(TypeError, match="k must be an int, got str"):
        seedshift.install("1")
    assert seedshift.installed_k() == 0


# --- the check, on notebooks ----------------------------------------------------------------

def write_notebook(path, code_cells):
    nb = demo_chapter.notebook([new_markdown_cell("# A seeded notebook")]
                               + [new_code_cell(code) for code in code_cells])
    nbformat.write(nb, path)
    return path


def run_check(paths, ks, keep_going=False, jobs=1):
    out = io.StringIO()
    failed = robust.check(paths, ks, keep_going, out=out, jobs=jobs)
    return failed, out.getvalue()


def test_demo_chapter_asserts_only_seed_free_facts(demo):
    # 02_heads seeds `random` and asserts a share that no seed changes
    paths = book.all_notebooks(demo)
    failed, text = run_check(paths, [1])
    assert failed == 0, text
    assert text.count(": ok (") == len(paths) == 3
    assert "robust: 3 of 3 runs ok (3 notebooks, K = 1)" in text
    assert text.splitlines()[-1] == "robust: 3 passed, 0 failed"


def test_an_assert_of_one_seeds_digits_fails(demo):
    seed0 = torch.rand(2, generator=torch._C.Generator().manual_seed(0)).tolist()
    path = write_notebook(demo / "notebooks" / "03_digits.ipynb", [
        "import torch\n\ntorch.manual_seed(0)\nx = torch.rand(2).tolist()",
        f"assert 0 <= min(x) <= max(x) < 1\nprint(x)\nassert x == {seed0!r}, 'seed 0 digits'",
        f"assert x[0] == {seed0[0]!r}, 'reached with --keep-going only'",
    ])
    failed, text = run_check([path], [0, 1], keep_going=True, jobs=2)  # two kernels at once
    assert failed == 1
    lines = text.splitlines()  # in the order of the runs, whichever finished first
    assert lines[0].startswith(f"K=0 {path}: ok (")
    assert lines[1].startswith(f"K=1 {path}: FAILED cell 2: line 3: assert x == [")
    assert "-> AssertionError: seed 0 digits (" in lines[1]
    # --keep-going: the cells after the first failure run too, and are listed under it
    assert lines[2].startswith("    also cell 3: line 1: assert x[0] == ")
    assert "AssertionError: reached with --keep-going only" in lines[2]
    assert lines[3].startswith("robust: 1 of 2 runs ok (1 notebooks, K = 0 1) in ")
    assert lines[4:] == ["robust: 1 passed, 1 failed"]


def test_d2lutil_in_the_kernel_sees_the_shift_and_main_exits_with_the_result(demo, capsys):
    k = 3
    samples = tasks.sample_values(2, 3, seed=k).tolist()
    letters = alignment.letter_embeddings(2, k).tolist()
    path = write_notebook(demo / "notebooks" / "04_library.ipynb", [
        "import torch\n\nfrom d2lutil import alignment, tasks",
        f"assert tasks.sample_values(2, 3, seed=0).tolist() == {samples!r}",
        f"assert alignment.letter_embeddings(2, 0).tolist() == {letters!r}",
        "generator = torch.Generator().manual_seed(5)\n"
        "assert isinstance(generator, torch.Generator)\n"
        "assert isinstance(torch.default_generator, torch.Generator)\n"
        "values, _ = tasks.sample_sequence_copy(2, generator=generator)",
    ])
    assert robust.main([str(path), "--k", str(k)]) == 0
    assert robust.main([str(path), "--k", "0"]) == 1
    text = capsys.readouterr().out
    assert f"K={k} {path}: ok (" in text
    assert f"K=0 {path}: FAILED cell 2: line 1: assert tasks.sample_values" in text


def test_main_refuses_a_missing_notebook(tmp_path, capsys):
    with pytest.raises(SystemExit):
        robust.main([str(tmp_path / "missing.ipynb")])
    assert "no such notebook" in capsys.readouterr().err


def test_a_failure_is_described_by_the_cells_line_and_the_exception():
    cell = new_code_cell("x = 1\ncheck(x)  # raises in a function of an earlier cell")
    cell.outputs = [nbformat.v4.new_output(
        "error", ename="ValueError", evalue="x must be 2",
        traceback=["\x1b[0;31mValueError\x1b[0m  Traceback (most recent call last)",
                   "Cell \x1b[0;32mIn[9], line 2\x1b[0m\n----> 2 check(x)",
                   "Cell \x1b[0;32mIn[4], line 3\x1b[0m, in check(x)\n----> 3 raise"])]
    assert robust.describe_failure(cell) == (
        "line 2: check(x) # raises in a function of an earlier cell -> ValueError: x must be 2")
    cell.outputs[0].evalue = ""
    cell.outputs[0].traceback = []
    assert robust.describe_failure(cell) == "ValueError"
    cell.outputs = []
    assert robust.describe_failure(cell) == "failed without an error output"
