"""The checks of notebook 06's exercises, against answers computed here by another route.

No model is trained here: the answers come from models built to the exercises' conditions
(a head mask at a least-squares optimum, heads as generic linear maps of the two values an
output needs) and from slicing a real module's weights, never from the constants in
d2lutil.exercises.nb06.
"""

import itertools
import re

import nbformat
import numpy as np
import pytest
import torch

import book
import d2lutil
from d2lutil.exercises.nb06 import ex1, ex2, ex3

CHAPTER = book.ROOT / "notebooks" / "06_learned_heads.ipynb"
SOLUTIONS = book.ROOT / "notebooks" / "solutions" / "06_solutions.ipynb"


@pytest.fixture(scope="module")
def cost_terms():
    """|g_i| and H_ii / 2 of a head mask whose all-ones value is a least-squares optimum."""
    gen = torch.Generator().manual_seed(0)
    contributions = torch.randn(4, 200, 16, generator=gen, dtype=torch.float64)  # c_i(x)
    # Targets: the sum of the heads plus noise orthogonal to every contribution, so the
    # mask of ones minimises the loss, as training leaves a model near a minimum.
    C = contributions.reshape(4, -1).T
    noise = torch.randn(C.shape[0], 1, generator=gen, dtype=torch.float64)
    noise -= C @ torch.linalg.lstsq(C, noise).solution
    targets = contributions.sum(dim=0) + noise.reshape(200, 16)

    def mean_loss(mask):
        return ((torch.einsum("i,ixd->xd", mask, contributions) - targets) ** 2).mean()

    ones = torch.ones(4, dtype=torch.float64)
    g = torch.autograd.functional.jacobian(mean_loss, ones)
    H = torch.autograd.functional.hessian(mean_loss, ones)
    return g.abs(), H.diagonal() / 2


def test_ex1_accepts_the_larger_term_in_any_spelling(cost_terms):
    first, second = cost_terms
    larger = "second" if (second > first).all() else "first"
    for answer in (larger, larger.upper(), f"{larger}-order", "Hessian" if larger == "second"
                   else "gradient"):
        assert ex1.check(answer)


@pytest.mark.parametrize("wrong", ["first", "gradient", "first order", "third", 2, ...])
def test_ex1_refuses_wrong_or_unanswered(wrong):
    assert not ex1.check(wrong)


def narrow_head_errors(num_samples=4_000, seed=0):
    """Relative squared error of the best readout from k of eight heads of width 2.

    Each head is a generic linear map from the 16 numbers an output needs ([x_j; x_k], two
    values of width 8) to its 2 outputs; the error is averaged over a few subsets per k.
    """
    rng = np.random.default_rng(seed)
    heads = rng.standard_normal((8, 2, 16))
    train, test = (rng.standard_normal((num_samples, 16)) for _ in range(2))
    errors = {}
    for k in range(1, 9):
        subsets = list(itertools.combinations(range(8), k))[:5]
        per_subset = []
        for kept in subsets:
            M = heads[list(kept)].reshape(-1, 16)
            readout, *_ = np.linalg.lstsq(train @ M.T, train, rcond=None)
            residual = test - test @ M.T @ readout
            per_subset.append((residual ** 2).sum() / (test ** 2).sum())
        errors[k] = float(np.mean(per_subset))
    return errors


@pytest.fixture(scope="module")
def narrow():
    return narrow_head_errors()


def test_ex2_accepts_measured_errors_as_list_dict_or_tensor(narrow):
    assert ex2.check(narrow)
    assert ex2.check([narrow[k] for k in range(1, 9)])
    assert ex2.check(torch.tensor([narrow[k] for k in range(1, 9)]))


@pytest.mark.parametrize("wrong", ["share kept", "width 4", "width 1", "seven", "keys"])
def test_ex2_refuses_typical_wrong_answers(narrow, wrong):
    listed = np.array([narrow[k] for k in range(1, 9)])
    answers = {"share kept": 1 - listed,
               "width 4": np.clip(1 - 2 * (1 - listed), 0, None),
               "width 1": 1 - (1 - listed) / 2,
               "seven": listed[:7],
               "keys": {k - 1: narrow[k] for k in range(1, 9)}}[wrong]
    assert not ex2.check(answers)


def test_ex2_hints_give_the_method_not_the_numbers(narrow):
    """No hint states a refitted error or the formula that gives them all."""
    hints = " ".join(ex2.hints).replace(" ", "")
    for k in range(1, 8):
        for digits in (2, 3):
            assert f"{narrow[k]:.{digits}f}".lstrip("0") not in hints, k
    for formula in ("1-2k/16", "1-k/8", "2k/16", "k/8"):
        assert formula not in hints


def test_ex2_states_the_steps_the_solution_trains():
    """The exercise and its hint say how long to train: as long as the solution does."""
    solutions = nbformat.read(SOLUTIONS, as_version=4)
    code = "\n".join(c.source for c in solutions.cells if c.cell_type == "code")
    steps = re.findall(r"train\(num_heads=8, num_steps=(\d+)\)", code)
    assert len(steps) == 1
    nb = nbformat.read(CHAPTER, as_version=4)
    exercise = next(c.source for c in nb.cells
                    if c.cell_type == "markdown" and c.source.startswith("2. "))
    for text in (exercise, " ".join(ex2.hints)):
        assert f"{steps[0]} steps" in " ".join(text.split())
        assert f"num_steps={steps[0]}" in text


def smallest_set_size(seed=0):
    """Heads of width 8 = m, each one mixture of the two values: the fewest that recover both."""
    rng = np.random.default_rng(seed)
    projections = rng.standard_normal((4, 8, 8))
    mixtures = rng.dirichlet([1, 1], size=4)
    train, test = (rng.standard_normal((4_000, 16)) for _ in range(2))
    for k in range(1, 5):
        M = np.vstack([np.hstack([a * W, b * W]) for (a, b), W in
                       zip(mixtures[:k], projections[:k], strict=True)])
        readout, *_ = np.linalg.lstsq(train @ M.T, train, rcond=None)
        residual = test - test @ M.T @ readout
        if (residual ** 2).sum() / (test ** 2).sum() < 0.01:
            return k
    raise AssertionError("no set of heads recovers both values")


@pytest.fixture(scope="module")
def pruning():
    """The smallest set, and the parameters heads 2 and 3 own, sliced from a real module."""
    attention = d2lutil.MultiHeadAttention(32, 4, query_size=32, key_size=32, value_size=8)
    p = 32 // 4
    pruned = slice(2 * p, 4 * p)  # heads 2 and 3: their features in the projections
    owned = sum(W.weight[pruned].numel() for W in (attention.W_q, attention.W_k, attention.W_v))
    owned += attention.W_o.weight[:, pruned].numel()
    return smallest_set_size(), owned


def test_ex3_accepts_the_simulated_and_sliced_answers(pruning):
    size, owned = pruning
    assert ex3.check(size, owned)
    assert ex3.check(float(size), torch.tensor(owned))


@pytest.mark.parametrize("wrong", ["one head", "all heads", "one pruned head", "module",
                                   "wide W_v"])
def test_ex3_refuses_typical_wrong_answers(pruning, wrong):
    size, owned = pruning
    answers = {"one head": (1, owned), "all heads": (4, owned),
               "one pruned head": (size, owned // 2), "module": (size, 2 * owned),
               "wide W_v": (size, owned + 2 * 8 * 24)}[wrong]
    assert not ex3.check(*answers)


def test_ex3_asks_for_the_size_and_says_so_when_given_a_set(pruning, capsys):
    size, owned = pruning
    for heads in (tuple(range(size)), list(range(size)), set(range(size)),
                  frozenset(range(size))):
        assert not ex3.check(heads, owned)
        assert "size" in capsys.readouterr().out


@pytest.mark.parametrize("answer", ["2", "two", None, ..., [], (), {}, {0: 1}, set(),
                                    [[0, 1]], np.array([0, 1]), np.zeros((2, 2)),
                                    torch.tensor([0, 1]), torch.tensor(2.0), 1e300,
                                    float("nan"), True, 2 + 0j, {0, "a"}, (0.5, 1.5)])
def test_ex3_check_never_raises(pruning, answer):
    size, owned = pruning
    assert not ex3.check(answer, answer)  # no one number answers both parts
    verdict = ex3.check(answer, owned)
    assert bool(verdict) == (answer is not True and _is_the_size(answer, size))


def _is_the_size(answer, size):
    """Whether an answer is the number ``size`` in one of the accepted forms."""
    if isinstance(answer, str):
        return False
    try:
        return float(np.asarray(answer, dtype=float).reshape(())) == size
    except (TypeError, ValueError):
        return False
