"""Toy tasks and least-squares readouts of the chapter.

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
``relative_squared_error`` and ``readout_errors`` run on one torch thread
(``one_thread``, also usable around a notebook's own training loop) and
restore the caller's setting.
"""

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
    "sequence_copy_targets",
    "sample_sequence_copy",
    "CopyBothModel",
    "train_copy_both",
    "head_maps",
    "mixing",
    "per_head_outputs",
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


# --- The copy-both task as a sequence (notebooks 6 and 7) --------------------------------
#
# n source positions hold values x_1, ..., x_n (each of width m, i.i.d. standard normal);
# output position j must produce [x_j ; x_(n+1-j)]: one source position in reading order
# and one mirrored, so every output needs two positions, as in copy-both.


def sequence_copy_targets(values):
    """Targets of the sequence copy-both task: output j is ``[x_j ; x_(n+1-j)]``.

    values: (batch_size, n, m) -> targets (batch_size, n, 2 * m). Counting from 0 in
    code, output ``j`` concatenates ``values[:, j]`` and ``values[:, n - 1 - j]``.
    """
    _tensor("values", values, 3)
    # (batch_size, n, m) and its mirror image along the positions -> (batch_size, n, 2 * m)
    return torch.cat([values, values.flip(1)], dim=-1)


def sample_sequence_copy(batch_size, num_positions=8, value_size=8, *, generator,
                         dtype=torch.float32):
    """A batch of the sequence copy-both task: ``(values, targets)``.

    values: (batch_size, num_positions, value_size), i.i.d. standard normal;
    targets: (batch_size, num_positions, 2 * value_size), see ``sequence_copy_targets``.
    ``generator`` is a ``torch.Generator`` (a training loop draws fresh batches from one
    stream of it) or an int seed (a fixed set, e.g. held-out samples: the same seed gives
    the same batch). The global random state is left untouched.
    """
    check_positive_int("batch_size", batch_size)
    check_positive_int("num_positions", num_positions)
    check_positive_int("value_size", value_size)
    _float_dtype(dtype)
    if not isinstance(generator, torch.Generator):
        if isinstance(generator, bool) or not isinstance(generator, int):
            raise TypeError("generator must be a torch.Generator or an int seed, "
                            f"got {type(generator).__name__}")
        generator = torch.Generator().manual_seed(generator)
    values = torch.randn(batch_size, num_positions, value_size, generator=generator,
                         dtype=dtype)
    return values, sequence_copy_targets(values)


class CopyBothModel(nn.Module):
    """Queries mark output positions, keys mark source positions.

    The sequence copy-both task's model (notebooks 6 and 7): a cross-attention
    whose values are the source vectors, then a readout without bias.
    values: (batch_size, n, value_size) -> (batch_size, n, 2 * value_size).
    """
    def __init__(self, num_hiddens, num_heads, num_positions=8,
                 value_size=8, num_kv_heads=None):
        super().__init__()
        # learned position markers: the queries and the keys
        self.output_positions = nn.Embedding(num_positions, num_hiddens)
        self.source_positions = nn.Embedding(num_positions, num_hiddens)
        self.attention = MultiHeadAttention(
            num_hiddens, num_heads, query_size=num_hiddens,
            key_size=num_hiddens, value_size=value_size,
            num_kv_heads=num_kv_heads)
        self.readout = nn.Linear(num_hiddens, 2 * value_size, bias=False)

    def forward(self, values, head_mask=None):
        batch_size, num_positions, _ = values.shape
        positions = torch.arange(num_positions)
        # the same for every sequence: (batch_size, n, num_hiddens)
        queries = self.output_positions(positions).expand(batch_size, -1, -1)
        keys = self.source_positions(positions).expand(batch_size, -1, -1)
        attended = self.attention(queries, keys, values, head_mask=head_mask)
        # (batch_size, n, num_hiddens) -> (batch_size, n, 2 * value_size)
        return self.readout(attended)


def _check_solved_below(solved_below):
    """A loss threshold: a finite number >= 0 (0 never stops training early)."""
    if isinstance(solved_below, bool) or not isinstance(solved_below, (int, float)):
        raise TypeError("solved_below must be a number >= 0, "
                        f"got {type(solved_below).__name__}")
    if not 0 <= solved_below < float("inf"):
        raise ValueError(f"solved_below must be a finite number >= 0, got {solved_below!r}")


def train_copy_both(num_heads, num_hiddens=16, seed=0, num_steps=600,
                    batch_size=64, lr=0.01, n=8, m=8, solved_below=1e-4):
    """A CopyBothModel trained on fresh batches of the copy-both task.

    It stops after ``num_steps`` steps, or earlier, once the loss of a fresh
    batch is below ``solved_below`` (0: never).
    """
    check_seed(seed)
    check_positive_int("num_steps", num_steps)
    _check_solved_below(solved_below)
    torch.manual_seed(seed)  # the initial parameters
    model = CopyBothModel(num_hiddens, num_heads, num_positions=n,
                          value_size=m)
    # fused: one operation updates every parameter
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, fused=True)
    loss_fn = nn.MSELoss()
    # a seeded stream of fresh batches
    batches = torch.Generator().manual_seed(seed)
    for _ in range(num_steps):
        values, targets = sample_sequence_copy(batch_size, n, m,
                                               generator=batches)
        loss = loss_fn(model(values), targets)
        if loss.item() < solved_below:  # on a batch it has not seen
            break
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model


def head_maps(model, values):
    """A CopyBothModel's weights: (num_heads, n outputs, n sources).

    The same for every sequence (queries and keys mark positions only), so the
    first sequence of ``values`` (batch_size, n, m) shows them.
    """
    if not isinstance(model, CopyBothModel):
        raise TypeError("model must be a CopyBothModel, got "
                        f"{type(model).__name__}")
    model(values[:1])  # the model keeps the weights of its last call
    return model.attention.attention_weights[0].detach()


def mixing(model, values):
    """Each head's weights on source j and on source n+1-j, per output j:
    (n, num_heads, 2)."""
    w = head_maps(model, values)
    n = w.shape[-1]
    outputs = torch.arange(n)
    on_j = w[:, outputs, outputs]                # (num_heads, n)
    on_mirror = w[:, outputs, n - 1 - outputs]   # (num_heads, n)
    # (num_heads, n, 2) -> (n, num_heads, 2)
    return torch.stack([on_j, on_mirror], dim=-1).transpose(0, 1)


def per_head_outputs(model, values):
    """Each head's output before W_o: (batch_size, n, num_heads, p)."""
    attention = model.attention
    # the same for every sequence: (num_heads, n outputs, n sources)
    weights = head_maps(model, values)
    with torch.no_grad():
        # (batch_size, n sources, num_hiddens)
        # -> (batch_size, n sources, num_heads, p)
        projected = attention.W_v(values).reshape(
            *values.shape[:2], attention.num_heads, -1)
        # head i, output j: the sum over sources k of
        # weights[i, j, k] * projected[b, k, i]
        return torch.einsum("ijk,bkip->bjip", weights, projected)
