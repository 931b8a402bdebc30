"""Reading an answer: the placeholder, numbers in any form, how far a number is off.

A checker raises :class:`Wrong` with a message for the student, or :class:`NotAnswered`.
"""

import math
import numbers

import numpy as np

FACTORS = (2, 3, 4, 5, 8, 10, 100, 1000)


class Wrong(Exception):
    """Raised by a checker: the answer is wrong; the message says how, not what is right."""


class NotAnswered(Exception):
    """Raised by a checker when the answer is (or holds) the placeholder ``...`` or None."""



def is_placeholder(answer):
    if answer is Ellipsis or answer is None:
        return True
    if isinstance(answer, (list, tuple)):
        return any(is_placeholder(a) for a in answer)
    if isinstance(answer, dict):
        return any(is_placeholder(a) for a in answer.values())
    return False



def kind_of(answer):
    """'an int', 'a str', ...: the type of an answer, for a message."""
    name = type(answer).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


def as_array(answer):
    """The answer as a float64 NumPy array: numbers, nested lists and tuples, arrays, tensors."""
    if isinstance(answer, (str, bytes)):
        raise Wrong(f"expected numbers, got a string ({answer!r}); write them without quotes")
    if hasattr(answer, "detach") and hasattr(answer, "cpu"):  # a torch tensor
        answer = answer.detach().cpu().numpy()
    try:
        raw = np.asarray(answer)
    except ValueError:
        raise Wrong("expected numbers in rows of equal length") from None
    if raw.dtype.kind == "b":
        raise Wrong("expected numbers, got True/False values")
    if raw.dtype.kind in "USO":
        if raw.dtype.kind in "US" or any(isinstance(a, (str, bytes, bool, np.bool_))
                                        for a in raw.flat):
            raise Wrong(f"expected numbers, got {kind_of(answer)} holding other things")
        try:  # e.g. a list of 0-d tensors
            raw = np.asarray([float(a) for a in raw.flat], dtype=float).reshape(raw.shape)
        except (TypeError, ValueError):
            raise Wrong(f"expected numbers, got {kind_of(answer)} holding other things") from None
    if raw.dtype.kind == "c":
        raise Wrong("expected real numbers, got complex ones")
    if raw.dtype.kind not in "iuf":
        raise Wrong(f"expected numbers, got {kind_of(answer)}")
    array = raw.astype(float)
    if not np.isfinite(array).all():
        raise Wrong("not every number is finite (inf or nan)")
    return array


def as_float(answer):
    """One number from an int, float, NumPy scalar, one-element list, array or tensor."""
    if isinstance(answer, numbers.Number) and not isinstance(answer, (bool, np.bool_)):
        if isinstance(answer, numbers.Complex) and not isinstance(answer, numbers.Real):
            raise Wrong("expected a real number, got a complex one")
        value = float(answer)
        if not math.isfinite(value):
            raise Wrong(f"expected a finite number, got {value}")
        return value
    array = as_array(answer)
    if array.size != 1:
        raise Wrong(f"expected one number, got {array.size} (shape {array.shape})")
    return float(array.reshape(()))


_YES = {"yes", "true", "y"}
_NO = {"no", "false", "n"}


def as_truth(answer):
    """A yes/no answer as a bool: True/False, a NumPy or 0-d tensor bool, "yes"/"no"."""
    if isinstance(answer, str):
        text = answer.strip().lower()
        if text not in _YES | _NO:
            raise Wrong(f"expected True or False, got the string {answer!r}")
        return text in _YES
    if isinstance(answer, (bool, np.bool_)):
        return bool(answer)
    if hasattr(answer, "dtype") and str(answer.dtype) in ("bool", "torch.bool") and (
            getattr(answer, "ndim", 0) == 0):
        return bool(answer)
    raise Wrong(f"expected True or False, got {kind_of(answer)}")


def exception_name(answer):
    """The name of the exception an answer names: a class, an instance, or its name."""
    if isinstance(answer, type) and issubclass(answer, BaseException):
        return answer.__name__
    if isinstance(answer, BaseException):
        return type(answer).__name__
    if isinstance(answer, str):
        return answer.strip()
    if isinstance(answer, bool) or answer is None:
        raise Wrong("expected an exception class such as KeyError (something is raised)"
                    if answer in (False, None) else
                    "expected an exception class such as KeyError, not True")
    raise Wrong(f"expected an exception class such as KeyError, got {kind_of(answer)}")


def as_word(answer, choices, aliases):
    """A one-word answer as its choice: case and surrounding spaces ignored, an alias
    read as the choice it names; a Wrong for anything else."""
    if not isinstance(answer, str):
        raise Wrong(f"expected a string, one of {choices}, got {kind_of(answer)}")
    text = answer.strip().lower()
    text = aliases.get(text, text)
    if text not in choices:
        raise Wrong(f"expected one of {choices}, got {answer!r}")
    return text


def close_enough(x, expected, atol, rtol):
    """Whether ``|x - expected| <= atol + rtol * |expected|``."""
    return abs(x - expected) <= atol + rtol * abs(expected)


def how_far(x, expected, rtol=0.02):
    """How a wrong number relates to the right one, without saying the right one."""
    if expected != 0 and x != 0:
        ratio = x / expected
        if abs(ratio + 1) < rtol:
            return "right in size but of the wrong sign"
        for factor in FACTORS:
            if abs(ratio / factor - 1) < rtol:
                return f"too large by a factor of about {factor}"
            if abs(ratio * factor - 1) < rtol:
                return f"too small by a factor of about {factor}"
        if 0 < expected < 1 and abs(x - math.sqrt(expected)) < rtol * math.sqrt(expected):
            return "close to the square root of the right value"
        if 0 < expected < 1 and abs(x - expected ** 2) < rtol * expected ** 2:
            return "close to the square of the right value"
    if float(x).is_integer() and float(expected).is_integer() and abs(x - expected) == 1:
        return "off by one"
    return "not the right value"


def known_mistake(x, mistakes, close):
    """The message of the first (wrong value, message) of ``mistakes`` close to ``x``."""
    for value, message in mistakes:
        if close(value):
            return message
    return None
