"""Unit tests of d2lutil.tasks: copy-task data and least-squares readouts.

The training loop of the copy-both task lives in notebook 2 (which asserts its results).
"""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from d2lutil import tasks


def test_sample_values_shape_dtype_and_seed():
    a = tasks.sample_values(7, 5, 3, seed=4)
    assert a.shape == (7, 3, 5) and a.dtype == torch.float64
    assert torch.equal(a, tasks.sample_values(7, 5, 3, seed=4))
    assert not torch.equal(a, tasks.sample_values(7, 5, 3, seed=5))
    assert tasks.sample_values(2, 3, seed=0, dtype=torch.float32).dtype == torch.float32


def test_sample_values_are_standard_normal():
    values = tasks.sample_values(20_000, 4, seed=0)
    assert abs(float(values.mean())) < 0.01
    assert abs(float(values.var()) - 1.0) < 0.01


def test_sample_values_leaves_global_rng_alone():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    tasks.sample_values(10, 2, seed=1)
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_samples": 0, "value_size": 2}, ValueError, "num_samples must be a positive int"),
        ({"num_samples": 2.0, "value_size": 2}, TypeError, "num_samples must be a positive int"),
        ({"num_samples": 2, "value_size": True}, TypeError, "value_size must be a positive int"),
        ({"num_samples": 2, "value_size": 2, "num_positions": -1}, ValueError, "num_positions"),
        ({"num_samples": 2, "value_size": 2, "seed": "a"}, TypeError, "seed must be an int"),
        ({"num_samples": 2, "value_size": 2, "dtype": torch.int64}, TypeError, "dtype must be"),
    ],
)
def test_sample_values_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        tasks.sample_values(**kwargs)


def test_copy_targets_concatenates_positions():
    values = tasks.sample_values(3, 4, 2, seed=0)
    targets = tasks.copy_targets(values)
    assert targets.shape == (3, 8)
    assert torch.equal(targets[:, :4], values[:, 0]) and torch.equal(targets[:, 4:], values[:, 1])


def test_copy_targets_rejects_bad_values():
    with pytest.raises(ValueError, match="values must be 3-D"):
        tasks.copy_targets(torch.zeros(3, 4))
    with pytest.raises(TypeError, match="values must be a torch.Tensor"):
        tasks.copy_targets([[[1.0]]])


def test_head_outputs_are_the_mixtures():
    values = tasks.sample_values(5, 3, 2, seed=1)
    weights = [[0.7, 0.3], [0.2, 0.8]]
    features = tasks.head_outputs(values, weights)
    assert features.shape == (5, 6)
    assert torch.allclose(features[:, :3], 0.7 * values[:, 0] + 0.3 * values[:, 1])
    assert torch.allclose(features[:, 3:], 0.2 * values[:, 0] + 0.8 * values[:, 1])
    # A 1-D weight vector is one head.
    assert torch.allclose(tasks.head_outputs(values, [0.7, 0.3]), features[:, :3])


def test_head_outputs_rejects_bad_weights():
    values = tasks.sample_values(5, 3, 2, seed=1)
    with pytest.raises(ValueError, match="one column per position"):
        tasks.head_outputs(values, [[0.2, 0.3, 0.5]])
    with pytest.raises(ValueError, match="weights must be finite"):
        tasks.head_outputs(values, [math.nan, 1.0])
    with pytest.raises(ValueError, match=r"weights must be a non-empty matrix of shape \(h, k\)"):
        tasks.head_outputs(values, torch.zeros(2, 2, 2))
    with pytest.raises(TypeError, match="weights must be a tensor or a nested list"):
        tasks.head_outputs(values, "abc")


def test_fit_readout_recovers_a_linear_map():
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(50, 4, generator=gen, dtype=torch.float64)
    W_true = torch.randn(4, 3, generator=gen, dtype=torch.float64)
    W = tasks.fit_readout(X, X @ W_true)
    assert W.shape == (4, 3)
    assert torch.allclose(W, W_true, atol=1e-10)


def test_fit_readout_gelsd_handles_rank_deficient_features():
    # Duplicated columns: the minimum-norm solution splits the weight evenly.
    x = torch.linspace(-1, 1, 20, dtype=torch.float64)[:, None]
    W = tasks.fit_readout(torch.cat([x, x], dim=1), 2 * x)
    assert torch.allclose(W, torch.ones(2, 1, dtype=torch.float64), atol=1e-10)


def test_fit_readout_rejects_bad_arguments():
    X, Y = torch.zeros(4, 2), torch.zeros(4, 1)
    with pytest.raises(ValueError, match="driver must be one of"):
        tasks.fit_readout(X, Y, driver="qr")
    with pytest.raises(ValueError, match="same number of rows"):
        tasks.fit_readout(X, torch.zeros(3, 1))
    with pytest.raises(TypeError, match="share a dtype"):
        tasks.fit_readout(X, Y.double())
    with pytest.raises(ValueError, match="features must be 2-D"):
        tasks.fit_readout(torch.zeros(4), Y)
    with pytest.raises(TypeError, match="targets must hold floating-point numbers"):
        tasks.fit_readout(X, torch.zeros(4, 1, dtype=torch.int64))


def test_relative_squared_error_values():
    targets = torch.tensor([[3.0, 4.0]])
    assert tasks.relative_squared_error(targets, targets) == 0.0
    assert tasks.relative_squared_error(torch.zeros(1, 2), targets) == 1.0
    assert tasks.relative_squared_error(torch.tensor([[3.0, 0.0]]), targets) == pytest.approx(0.64)


def test_relative_squared_error_rejects_bad_arguments():
    with pytest.raises(ValueError, match="same shape"):
        tasks.relative_squared_error(torch.zeros(2, 2), torch.ones(2, 3))
    with pytest.raises(ValueError, match="targets must not be all zero"):
        tasks.relative_squared_error(torch.zeros(2, 2), torch.zeros(2, 2))


@settings(max_examples=15, deadline=None)
@given(a1=st.floats(0.0, 1.0), seed=st.integers(0, 10_000))
def test_one_head_leaves_half_the_squared_error(a1, seed):
    # d = 8, 20,000 held-out samples: sampling std of the error is about 0.002.
    _, held_out = tasks.readout_errors([a1, 1 - a1], value_size=8, num_train=20_000,
                                       num_test=20_000, seed=seed)
    assert abs(held_out - 0.5) < 0.012


def test_in_sample_and_held_out_biases_match_their_formulas():
    d, n, seeds = 8, 40, 300
    errors = [tasks.readout_errors([0.6, 0.4], value_size=d, num_train=n, num_test=2_000,
                                   seed=s) for s in range(seeds)]
    in_sample = sum(e[0] for e in errors) / seeds
    held_out = sum(e[1] for e in errors) / seeds
    assert in_sample == pytest.approx(0.5 * (1 - d / n), abs=0.01)
    assert held_out == pytest.approx(0.5 * (1 + d / (n - d - 1)), abs=0.015)


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ([[1.0, 0.0], [0.0, 1.0]], 0.0),
        ([[0.88, 0.12], [0.12, 0.88]], 0.0),
        ([[0.5, 0.5], [0.5, 0.5]], 0.5),
        ([[1, 0, 0], [0, 1, 0], [0.5, 0.5, 0]], 1 / 3),
        ([[0.2, 0.3, 0.5]], 2 / 3),
        ([[0.1, 0.9], [0.4, 0.6], [0.7, 0.3]], 0.0),
    ],
)
def test_error_is_one_minus_rank_over_k(weights, expected):
    assert tasks.theory_error(weights) == pytest.approx(expected)
    _, held_out = tasks.readout_errors(weights, value_size=8, num_train=5_000, num_test=20_000,
                                       seed=3)
    assert abs(held_out - expected) < 0.01


def test_float32_readout_is_accurate_but_not_exact():
    _, err32 = tasks.readout_errors([[0.88, 0.12], [0.12, 0.88]], value_size=8, num_train=1_000,
                                    num_test=1_000, seed=0, dtype=torch.float32)
    _, err64 = tasks.readout_errors([[0.88, 0.12], [0.12, 0.88]], value_size=8, num_train=1_000,
                                    num_test=1_000, seed=0)
    assert err64 < 1e-20 < err32 < 1e-8


def test_readout_errors_rejects_bad_arguments():
    with pytest.raises(ValueError, match="num_test must be a positive int"):
        tasks.readout_errors([0.5, 0.5], value_size=4, num_train=10, num_test=0)
    with pytest.raises(ValueError, match="driver must be one of"):
        tasks.readout_errors([0.5, 0.5], value_size=4, num_train=10, num_test=10, driver="x")


def test_one_thread_restores_the_setting():
    before = torch.get_num_threads()
    with tasks.one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_theory_error_rejects_bad_weights():
    with pytest.raises(ValueError, match=r"weights must be a non-empty matrix of shape \(h, k\)"):
        tasks.theory_error([])
    with pytest.raises(ValueError, match="weights must be finite"):
        tasks.theory_error([[1.0, math.inf]])


def test_relative_squared_error_rejects_non_tensors():
    with pytest.raises(TypeError, match="predictions must be a torch.Tensor"):
        tasks.relative_squared_error([[1.0]], torch.ones(1, 1))
