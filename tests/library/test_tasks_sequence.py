"""Unit tests of the sequence copy-both task in d2lutil.tasks (notebooks 6 and 7)."""

import pytest
import torch

from d2lutil import tasks


def by_hand(values):
    """Output j is [x_j ; x_(n+1-j)], built one position at a time (counting from 0)."""
    n = values.shape[1]
    return torch.stack([torch.cat([values[:, j], values[:, n - 1 - j]], dim=-1)
                        for j in range(n)], dim=1)


@pytest.mark.parametrize("num_positions", [1, 2, 7, 8])
def test_targets_pair_each_position_with_its_mirror(num_positions):
    values = torch.randn(3, num_positions, 5, generator=torch.Generator().manual_seed(0))
    targets = tasks.sequence_copy_targets(values)
    assert targets.shape == (3, num_positions, 10)
    assert torch.equal(targets, by_hand(values))


def test_targets_of_an_odd_length_repeat_the_middle_position():
    values = torch.arange(3 * 2, dtype=torch.float32).reshape(1, 3, 2)
    targets = tasks.sequence_copy_targets(values)
    assert targets[0, 1].tolist() == [2.0, 3.0, 2.0, 3.0]
    assert targets[0, 0].tolist() == [0.0, 1.0, 4.0, 5.0]


def test_targets_reject_bad_values():
    with pytest.raises(ValueError, match="values must be 3-D"):
        tasks.sequence_copy_targets(torch.zeros(4, 8))
    with pytest.raises(TypeError, match="values must be a torch.Tensor"):
        tasks.sequence_copy_targets([[[1.0]]])
    with pytest.raises(TypeError, match="values must hold floating-point numbers"):
        tasks.sequence_copy_targets(torch.zeros(1, 2, 3, dtype=torch.int64))


def test_sample_shapes_dtype_and_targets():
    values, targets = tasks.sample_sequence_copy(5, 6, 3, generator=0)
    assert values.shape == (5, 6, 3) and values.dtype == torch.float32
    assert targets.shape == (5, 6, 6)
    assert torch.equal(targets, by_hand(values))
    values, _ = tasks.sample_sequence_copy(2, generator=0, dtype=torch.float64)
    assert values.shape == (2, 8, 8) and values.dtype == torch.float64


def test_an_int_seed_gives_a_fixed_set():
    a, _ = tasks.sample_sequence_copy(4, generator=3)
    b, _ = tasks.sample_sequence_copy(4, generator=3)
    c, _ = tasks.sample_sequence_copy(4, generator=4)
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_a_generator_gives_a_stream_of_fresh_batches():
    stream = torch.Generator().manual_seed(7)
    first, _ = tasks.sample_sequence_copy(4, generator=stream)
    second, _ = tasks.sample_sequence_copy(4, generator=stream)
    assert not torch.equal(first, second)
    again = torch.Generator().manual_seed(7)
    assert torch.equal(tasks.sample_sequence_copy(4, generator=again)[0], first)
    assert torch.equal(tasks.sample_sequence_copy(4, generator=again)[0], second)


def test_sample_leaves_the_global_random_state_alone():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    tasks.sample_sequence_copy(16, generator=1)
    tasks.sample_sequence_copy(16, generator=torch.Generator().manual_seed(1))
    assert torch.equal(torch.rand(3), expected)


def test_sample_values_are_standard_normal():
    values, _ = tasks.sample_sequence_copy(4_000, generator=0)  # 256,000 numbers
    assert abs(float(values.mean())) < 0.01
    assert abs(float(values.var()) - 1.0) < 0.02


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"batch_size": 0}, ValueError, "batch_size must be a positive int"),
        ({"batch_size": 2.0}, TypeError, "batch_size must be a positive int"),
        ({"batch_size": 2, "num_positions": 0}, ValueError, "num_positions must be"),
        ({"batch_size": 2, "value_size": True}, TypeError, "value_size must be"),
        ({"batch_size": 2, "generator": "0"}, TypeError,
         "generator must be a torch.Generator or an int seed"),
        ({"batch_size": 2, "generator": True}, TypeError, "generator must be"),
        ({"batch_size": 2, "generator": None}, TypeError, "generator must be"),
        ({"batch_size": 2, "dtype": torch.int64}, TypeError, "dtype must be"),
    ],
)
def test_sample_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        tasks.sample_sequence_copy(**{"generator": 0, **kwargs})


def test_sample_needs_a_generator():
    with pytest.raises(TypeError, match="generator"):
        tasks.sample_sequence_copy(2)


def test_copy_both_model_maps_values_to_both_copies_and_obeys_the_head_mask():
    torch.manual_seed(0)
    model = tasks.CopyBothModel(16, 4, num_kv_heads=2)
    values = torch.randn(3, 8, 8)
    assert model(values).shape == (3, 8, 16) and model.attention.W_k.out_features == 8
    # no biases after the heads: switching every head off leaves nothing
    assert not model(values, head_mask=torch.zeros(4)).any()


# --- notebook 6's training loop and readings, shared with its solutions ---------------------

def test_train_copy_both_is_seeded_and_learns():
    short = {"num_heads": 2, "num_steps": 40}
    first, again = tasks.train_copy_both(**short), tasks.train_copy_both(**short)
    other = tasks.train_copy_both(seed=1, **short)
    for a, b in zip(first.parameters(), again.parameters(), strict=True):
        assert torch.equal(a, b)
    assert not all(torch.equal(a, c)
                   for a, c in zip(first.parameters(), other.parameters(), strict=True))
    values, targets = tasks.sample_sequence_copy(256, generator=5)
    torch.manual_seed(0)
    untrained = tasks.CopyBothModel(16, 2)
    with torch.no_grad():
        before = tasks.relative_squared_error(untrained(values).reshape(-1, 16),
                                              targets.reshape(-1, 16))
        after = tasks.relative_squared_error(first(values).reshape(-1, 16),
                                             targets.reshape(-1, 16))
    assert after < 0.8 * before


def test_train_copy_both_stops_once_a_fresh_batch_is_solved():
    torch.manual_seed(0)
    untrained = tasks.CopyBothModel(16, 2)
    # every batch's loss is below 10: stopped before the first step
    stopped = tasks.train_copy_both(2, num_steps=40, solved_below=10.0)
    for a, b in zip(untrained.parameters(), stopped.parameters(), strict=True):
        assert torch.equal(a, b)
    # 40 steps never reach 1e-4, and 0 never stops: both take all 40 steps
    never = tasks.train_copy_both(2, num_steps=40, solved_below=0)
    default = tasks.train_copy_both(2, num_steps=40)
    for a, b in zip(never.parameters(), default.parameters(), strict=True):
        assert torch.equal(a, b)


def test_train_copy_both_solves_the_task_and_stops_early():
    # stopped by the first fresh batch whose loss is below 1e-4
    model = tasks.train_copy_both(2)
    values, targets = tasks.sample_sequence_copy(256, generator=5)
    with torch.no_grad():
        error = tasks.relative_squared_error(model(values).reshape(-1, 16),
                                             targets.reshape(-1, 16))
    assert error < 1e-3


@pytest.mark.parametrize("kwargs, error, message", [
    ({"num_steps": 0}, ValueError, "num_steps must be a positive int, got 0"),
    ({"seed": "0"}, TypeError, "seed must be an int, got str"),
    ({"solved_below": -1e-4}, ValueError, "solved_below must be a finite number >= 0"),
    ({"solved_below": float("nan")}, ValueError, "solved_below must be a finite number"),
    ({"solved_below": float("inf")}, ValueError, "solved_below must be a finite number"),
    ({"solved_below": None}, TypeError, "solved_below must be a number >= 0, got NoneType"),
    ({"solved_below": True}, TypeError, "solved_below must be a number >= 0, got bool"),
])
def test_train_copy_both_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        tasks.train_copy_both(2, **kwargs)


def test_head_maps_and_mixing_read_the_weights_of_every_sequence():
    torch.manual_seed(0)
    model = tasks.CopyBothModel(16, 4)
    values, _ = tasks.sample_sequence_copy(3, generator=1)
    maps = tasks.head_maps(model, values)
    assert maps.shape == (4, 8, 8)
    torch.testing.assert_close(maps.sum(-1), torch.ones(4, 8))
    other, _ = tasks.sample_sequence_copy(3, generator=2)
    assert torch.equal(tasks.head_maps(model, other), maps)  # positions only
    mix = tasks.mixing(model, values)
    assert mix.shape == (8, 4, 2)
    for j in range(8):
        for i in range(4):
            assert mix[j, i, 0] == maps[i, j, j] and mix[j, i, 1] == maps[i, j, 7 - j]
    with pytest.raises(TypeError, match="model must be a CopyBothModel, got Linear"):
        tasks.head_maps(torch.nn.Linear(2, 2), values)


def test_per_head_outputs_rebuild_the_model_output():
    torch.manual_seed(0)
    model = tasks.CopyBothModel(16, 4)
    values, _ = tasks.sample_sequence_copy(5, generator=3)
    heads = tasks.per_head_outputs(model, values)
    assert heads.shape == (5, 8, 4, 4)
    with torch.no_grad():
        rebuilt = model.readout(model.attention.W_o(heads.reshape(5, 8, 16)))
        torch.testing.assert_close(rebuilt, model(values))
