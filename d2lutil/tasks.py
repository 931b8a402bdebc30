"""Toy tasks, least-squares readouts and the small trainer of the chapter.

The *copy* task: ``k`` positions hold random value vectors
``v_1, ..., v_k`` (each of width ``value_size``, i.i.d. standard normal); the
keys mark positions only, so an attention head's weights cannot depend on the
values. One query must report every value: the target is the concatenation
``t = [v_1; ...; v_k]``. With ``k = 2`` this is the *copy-both* task.

A head with weights ``(a_1, ..., a_k)`` outputs one mixture
``a_1 v_1 + ... + a_k v_k``; ``h`` heads with an ``h x k`` weight matrix ``A``
output ``h`` mixtures, concatenated. The best linear readout of the target
from the head outputs is fitted by least squares; its relative squared error
on held-out samples is about ``1 - rank(A) / k``.

Shapes used throughout:

* values: (num_samples, k, value_size)
* weights ``A``: (h, k)
* head outputs (features): (num_samples, h * value_size)
* targets: (num_samples, k * value_size)
* readout ``W``: (h * value_size, k * value_size), predictions = features @ W

The problems are small, so ``head_outputs``, ``fit_readout``,
``relative_squared_error``, ``readout_errors`` and ``train_copy_both`` run on
one torch thread (``one_thread``) and restore the caller's setting.
"""

import math
from collections import namedtuple
from contextlib import contextmanager
from functools import wraps

import numpy as np
import torch
from torch import nn

from .attention import MultiHeadAttention
from .shapes import check_positive_int, check_seed

__all__ = [
    "one_thread",
    "sample_values",
    "copy_targets",
    "head_outputs",
    "fit_readout",
    "relative_squared_error",
    "readout_errors",
    "theory_error",
    "TrainResult",
    "train_copy_both",
]

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@contextmanager
def one_thread():
    """Run the block with one torch thread, then restore the caller's setting.

    The chapter's problems are small: thread start-up costs more than it
    saves, and much more on a busy machine.
    """
    num_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(num_threads)


def _single_threaded(function):
    @wraps(function)
    def wrapper(*args, **kwargs):
        with one_thread():
            return function(*args, **kwargs)

    return wrapper


def _float_dtype(dtype):
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating torch.dtype, got {dtype!r}")


def _tensor(name, x, ndim):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must hold floating-point numbers, got dtype {x.dtype}")


def _as_weights(weights, dtype=torch.float64):
    """The weights as a 2-D (h, k) tensor; a 1-D (k,) input is one head."""
    if isinstance(weights, torch.Tensor):
        A = weights.detach().to(dtype)
    else:
        try:
            A = torch.tensor(weights, dtype=dtype)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"weights must be a tensor or a nested list of numbers (h, k), got {weights!r}"
            ) from err
    if A.dim() == 1:
        A = A[None, :]
    if A.dim() != 2 or A.numel() == 0:
        raise ValueError(
            f"weights must be a non-empty matrix of shape (h, k), got shape {tuple(A.shape)}"
        )
    if not torch.isfinite(A).all():
        raise ValueError("weights must be finite")
    return A


def sample_values(num_samples, value_size, num_positions=2, *, seed=0, dtype=torch.float64):
    """I.i.d. standard normal values of shape (num_samples, num_positions, value_size).

    ``seed`` seeds a private ``np.random.default_rng`` (faster than ``torch.randn``
    for the large samples of the chapter), so no global random state is touched.
    """
    check_positive_int("num_samples", num_samples)
    check_positive_int("value_size", value_size)
    check_positive_int("num_positions", num_positions)
    check_seed(seed)
    _float_dtype(dtype)
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((num_samples, num_positions, value_size))
    return torch.from_numpy(values).to(dtype)


def copy_targets(values):
    """The copy target ``[v_1; ...; v_k]``: values (n, k, d) -> targets (n, k * d)."""
    _tensor("values", values, 3)
    # (num_samples, k, d) -> (num_samples, k * d)
    return values.reshape(values.shape[0], -1)


@_single_threaded
def head_outputs(values, weights):
    """Outputs of ``h`` heads with fixed weights, concatenated.

    values: (n, k, d); weights: (h, k) (or (k,) for one head), e.g. each row
    a softmax distribution over the k positions. Head j outputs
    ``sum_i weights[j, i] * values[:, i]``; the result has shape (n, h * d).
    """
    _tensor("values", values, 3)
    A = _as_weights(weights, values.dtype)
    if A.shape[1] != values.shape[1]:
        raise ValueError(
            f"weights must have one column per position: values have {values.shape[1]} "
            f"positions, weights have shape {tuple(A.shape)}"
        )
    # (h, k) @ (n, k, d) -> (n, h, d)
    mixtures = torch.matmul(A, values)
    # (n, h, d) -> (n, h * d)
    return mixtures.reshape(values.shape[0], -1)


def _check_pair(features, targets):
    _tensor("features", features, 2)
    _tensor("targets", targets, 2)
    if features.shape[0] != targets.shape[0]:
        raise ValueError(
            "features and targets must have the same number of rows (samples), got "
            f"{features.shape[0]} and {targets.shape[0]}"
        )


@_single_threaded
def fit_readout(features, targets, *, driver="gelsd"):
    """Least-squares readout ``W`` minimising ``||features @ W - targets||^2``.

    features: (n, f); targets: (n, t); returns W of shape (f, t) in the
    features' dtype. The default driver ``"gelsd"`` (SVD based) finds the
    minimum-norm solution and handles rank-deficient features (e.g. more
    heads than positions) correctly; ``"gelsy"``, torch's CPU default, can
    misjudge the rank there.
    """
    _check_pair(features, targets)
    if driver not in _DRIVERS:
        raise ValueError(f"driver must be one of {_DRIVERS}, got {driver!r}")
    if features.dtype != targets.dtype:
        raise TypeError(
            f"features and targets must share a dtype, got {features.dtype} and {targets.dtype}"
        )
    return torch.linalg.lstsq(features, targets, driver=driver).solution


@_single_threaded
def relative_squared_error(predictions, targets):
    """``sum ||prediction - target||^2 / sum ||target||^2`` over all samples, a float.

    predictions, targets: (n, t). Its square root is the *relative error*.
    """
    _tensor("predictions", predictions, 2)
    _tensor("targets", targets, 2)
    if predictions.shape != targets.shape:
        raise ValueError(
            "predictions and targets must have the same shape, got "
            f"{tuple(predictions.shape)} and {tuple(targets.shape)}"
        )
    targets = targets.to(torch.float64)
    total = float(torch.linalg.vector_norm(targets) ** 2)
    if total == 0.0:
        raise ValueError("targets must not be all zero (the relative error is undefined)")
    residual = predictions.to(torch.float64) - targets
    return float(torch.linalg.vector_norm(residual) ** 2) / total


@_single_threaded
def readout_errors(weights, *, value_size, num_train, num_test, seed=0, dtype=torch.float64,
                   driver="gelsd"):
    """Fit the readout for heads with ``weights`` (h, k); return its two errors.

    Draws ``num_train`` training and ``num_test`` held-out samples of the copy
    task (values of width ``value_size``), fits ``W`` on the training samples
    and returns ``(in_sample, held_out)``: the relative squared errors on the
    training samples (biased low) and on the held-out samples (biased high).
    """
    A = _as_weights(weights, dtype)
    check_positive_int("num_train", num_train)
    check_positive_int("num_test", num_test)
    values = sample_values(num_train + num_test, value_size, A.shape[1], seed=seed, dtype=dtype)
    features, targets = head_outputs(values, A), copy_targets(values)
    W = fit_readout(features[:num_train], targets[:num_train], driver=driver)
    in_sample = relative_squared_error(features[:num_train] @ W, targets[:num_train])
    held_out = relative_squared_error(features[num_train:] @ W, targets[num_train:])
    return in_sample, held_out


def theory_error(weights):
    """The best expected relative squared error ``1 - rank(A) / k`` for weights A (h, k)."""
    A = _as_weights(weights)
    return 1.0 - int(torch.linalg.matrix_rank(A)) / A.shape[1]


#: What ``train_copy_both`` returns. ``losses``: the training MSE of every
#: step (a list of floats); ``test_error``: the relative squared error on the
#: held-out samples; ``weights``: the trained model's attention weights for
#: the fixed query, shape (num_heads, 2) (for the first held-out sample when
#: the keys carry values).
TrainResult = namedtuple("TrainResult", ["model", "losses", "test_error", "weights"])


def _copy_both_batch(batch_size, value_size, num_hiddens, generator):
    """values input (batch, 2, num_hiddens) = [v_i; 0] and targets (batch, 2 * value_size)."""
    v = torch.randn(batch_size, 2, value_size, generator=generator)
    padded = torch.zeros(batch_size, 2, num_hiddens)
    padded[:, :, :value_size] = v
    return padded, copy_targets(v)


def train_copy_both(num_heads, *, num_hiddens=16, value_size=8, num_steps=1000,
                    batch_size=256, lr=3e-3, num_test=16384, seed=0,
                    keys_carry_values=False, callback=None):
    """Train ``MultiHeadAttention(num_hiddens, num_heads, dropout=0)`` on copy-both.

    Cross-attention with one query: the queries input is one fixed random
    token (1, 1, num_hiddens); the keys input is two fixed random position
    markers (2, num_hiddens) (plus the values input when
    ``keys_carry_values``); the values input is ``[v_i; 0]`` of width
    ``num_hiddens`` with ``v_i`` of width ``value_size``; the target is
    ``[v_1; v_2]``, so ``num_hiddens`` must equal ``2 * value_size``. MSE loss,
    Adam with learning rate ``lr``, ``num_steps`` batches of ``batch_size``
    fresh samples. ``callback(step, loss)`` is called after every step (e.g.
    to advance a progress bar). Everything is seeded by ``seed``; the global
    random state is left untouched. Returns a ``TrainResult``.
    """
    check_positive_int("num_heads", num_heads)
    check_positive_int("num_hiddens", num_hiddens)
    check_positive_int("value_size", value_size)
    check_positive_int("num_steps", num_steps)
    check_positive_int("batch_size", batch_size)
    check_positive_int("num_test", num_test)
    if num_hiddens != 2 * value_size:
        raise ValueError(
            f"num_hiddens must equal 2 * value_size (the target [v1; v2]), got "
            f"num_hiddens={num_hiddens} and value_size={value_size}"
        )
    if isinstance(lr, bool) or not isinstance(lr, (int, float)):
        raise TypeError(f"lr must be a number, got {type(lr).__name__}")
    if not 0 < lr < math.inf:
        raise ValueError(f"lr must be a positive number, got {lr!r}")
    if not isinstance(keys_carry_values, bool):
        raise TypeError(
            f"keys_carry_values must be a bool, got {type(keys_carry_values).__name__}"
        )
    check_seed(seed)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable or None, got {type(callback).__name__}")
    with one_thread():
        return _train(num_heads, num_hiddens, value_size, num_steps, batch_size, lr, num_test,
                      seed, keys_carry_values, callback)


def _train(num_heads, num_hiddens, value_size, num_steps, batch_size, lr, num_test, seed,
           keys_carry_values, callback):
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = MultiHeadAttention(num_hiddens, num_heads, dropout=0.0, query_size=num_hiddens,
                                   key_size=num_hiddens, value_size=num_hiddens)
    query = torch.randn(1, 1, num_hiddens, generator=generator)
    markers = torch.randn(1, 2, num_hiddens, generator=generator)

    def forward(values):
        n = values.shape[0]
        keys = markers.expand(n, -1, -1)
        if keys_carry_values:
            keys = keys + values
        # (n, 1, num_hiddens) -> (n, num_hiddens)
        return model(query.expand(n, -1, -1), keys, values).reshape(n, -1)

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    losses = []
    for step in range(num_steps):
        values, targets = _copy_both_batch(batch_size, value_size, num_hiddens, generator)
        loss = loss_fn(forward(values), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if callback is not None:
            callback(step, losses[-1])
    with torch.no_grad():
        values, targets = _copy_both_batch(num_test, value_size, num_hiddens, generator)
        test_error = relative_squared_error(forward(values), targets)
        weights = model.attention_weights[0, :, 0, :].clone()
    return TrainResult(model, losses, test_error, weights)
