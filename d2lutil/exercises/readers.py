"""Readers: how a checker reads an answer given in another right form, before it compares.

A reader is named in ``numbers_close(..., read="name")`` and is a function of the answer
and the number of values the right answer has; it returns the answer as an array, or
raises :class:`Wrong`. It knows nothing of the right answer but that count, so the student
edition ships it as it is (course/sealed.py).
"""

import numbers

import numpy as np

from d2lutil.exercises.answers import Wrong

__all__ = ["a_count", "boolean_mask", "one_or_each"]


def boolean_mask(answer, size):
    """A mask of shape (batch_size, 1, T, S): True/False read as 1/0; a row axis of 1 (a
    mask of the keys only, (batch_size, 1, 1, S)) read broadcast over the T rows that
    ``size`` leaves."""
    if not (hasattr(answer, "tolist") or isinstance(answer, (list, tuple))):
        return answer
    try:
        numbers = np.asarray(answer.tolist() if hasattr(answer, "tolist") else answer)
    except (TypeError, ValueError):
        return answer
    if not (numbers.dtype == bool or np.issubdtype(numbers.dtype, np.number)):
        return answer
    numbers = numbers.astype(float)
    if 1 < numbers.ndim < 4:
        raise Wrong(f"a mask of shape {numbers.shape} does not line up with the weights' "
                    "axes (batch_size, num_heads, T, S): give it all four, the heads' as 1")
    if numbers.ndim == 4:
        batch, heads, rows, keys = numbers.shape
        per_row = batch * heads * keys
        if rows == 1 and per_row and size % per_row == 0 and size // per_row > 1:
            numbers = np.broadcast_to(numbers, (batch, heads, size // per_row, keys))
    return numbers


def one_or_each(answer, size):
    """Equal numbers, one per item, given as one number for all (the weight of every copy,
    say) or one per item."""
    if isinstance(answer, (int, float)) and not isinstance(answer, bool) and size > 1:
        return [answer] * size
    shape = getattr(answer, "shape", None)
    if shape is not None and tuple(shape) == () and size > 1:  # a 0-d array or tensor
        return [float(answer)] * size
    return answer


def a_count(answer, size):
    """A count, never the set it counts: a set, or a list or tuple of several whole
    numbers, is refused with a message that says so."""
    is_set = isinstance(answer, (set, frozenset)) or (
        isinstance(answer, (list, tuple)) and len(answer) > 1
        and all(isinstance(x, numbers.Integral) for x in answer))
    if is_set:
        raise Wrong("that looks like a set; the question asks for its size, the number of "
                    "things it holds")
    return answer
