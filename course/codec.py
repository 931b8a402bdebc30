"""Values as tagged JSON, one format both ways: the cases of function answers that the
grader and the sealed checks send, and the answers the student's kernel sends back (the
last cell of course/grade_runner.py). The wheel ships it as ``d2lutil/exercises/codec.py``.

``encode`` takes None, numbers, strings, ``...``, lists, tuples, dicts, tensors, NumPy
values, ``modules.Case``, exceptions and their classes, and objects made by a public
builder of ``d2lutil.exercises.cases`` or ``.public`` (their ``built_by``); anything else
is a TypeError (a case travels as data, never as a pickle), or, in a student's answer
(``loose``), a stand-in that keeps its type's name. ``decode`` gives the values back,
builds a case only with a module of ``builders`` (none for what a kernel sent) and raises
a ValueError that says what it cannot read.
"""

import builtins
import importlib
import re

import numpy as np
import torch

from d2lutil.exercises.checkers import CallResults, Raised
from d2lutil.exercises.modules import Case

BUILDERS = ("cases", "public")  # the modules whose public builders may make a case
MAX_DEPTH = 20  # lists, tuples and dicts nested deeper are not sent
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,40}")


def encode(value, max_items=None, loose=False, depth=0):
    """``value`` as tagged JSON (see the module's doc); with ``max_items``, a list, tuple,
    dict, array or tensor of more items as ``too_large``."""
    if type(value) in (bool, int, float, str, type(None)):
        return value
    if value is Ellipsis:
        return {"$": "ellipsis"}
    if max_items is not None and _size(value) > max_items:
        return {"$": "too_large", "size": _size(value), "limit": max_items}
    if isinstance(value, torch.Tensor):
        return {"$": "tensor", "dtype": str(value.dtype).replace("torch.", ""),
                "shape": list(value.shape), "data": value.detach().cpu().flatten().tolist()}
    if isinstance(value, (np.ndarray, np.generic)):
        return {"$": "ndarray", "dtype": str(value.dtype), "shape": list(np.shape(value)),
                "data": np.ravel(value).tolist()}

    def inner(item):
        return encode(item, max_items, loose, depth + 1)

    if isinstance(value, (list, tuple, dict)) and depth < MAX_DEPTH:
        if isinstance(value, dict):
            return {"$": "dict", "items": [[inner(k), inner(v)] for k, v in value.items()]}
        items = [inner(v) for v in value]
        if isinstance(value, list):
            return items
        return {"$": "case", "fields": items} if isinstance(value, Case) else {
            "$": "tuple", "items": items}
    if isinstance(value, type) and issubclass(value, BaseException):
        return {"$": "exception_class", "name": value.__name__}
    if isinstance(value, BaseException):
        return {"$": "exception", "name": type(value).__name__}
    built_by = None if loose else getattr(value, "built_by", None)
    if built_by is not None:  # (builder, args) of cases, or (module, builder, args)
        module, name, args = built_by if len(built_by) == 3 else ("cases", *built_by)
        return {"$": "built", "module": module, "name": name, "args": [inner(a) for a in args]}
    what = "values nested too deeply" if depth >= MAX_DEPTH else type(value).__name__
    if loose:
        return {"$": "function"} if callable(value) else {"$": "unsupported", "type": what}
    raise TypeError(f"a case cannot hold {what}: only numbers, strings, tensors, arrays, "
                    "Case and objects of d2lutil.exercises.cases travel")


def _size(value):
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, (np.ndarray, np.generic)):
        return value.size
    return len(value) if isinstance(value, (list, tuple, dict)) else 0


def decode(value, builders=BUILDERS):
    """The value :func:`encode` was given, or its stand-in (see the module's doc)."""
    if isinstance(value, list):
        return [decode(v, builders) for v in value]
    if not isinstance(value, dict):
        return value
    kind = value.get("$")
    if kind == "ellipsis":
        return ...
    if kind == "tuple":
        return tuple(decode(v, builders) for v in value["items"])
    if kind == "case":
        return Case(*(decode(v, builders) for v in value["fields"]))
    if kind == "dict":
        return {_hashable(decode(k, builders)): decode(v, builders) for k, v in value["items"]}
    if kind in ("tensor", "ndarray"):
        return array_of(value)
    if kind == "exception_class":
        return _exception_class(value["name"])
    if kind == "exception":
        return _exception_class(value["name"])()
    if kind in ("function", "unsupported"):
        name = value.get("type", kind)
        safe = name if NAME_RE.fullmatch(str(name)) else "object"
        return type(safe, (), {"__repr__": lambda self: f"<a value of type {safe}>"})()
    if kind == "too_large":
        raise ValueError(f"it holds {value.get('size')} values, more than the "
                         f"{value.get('limit', 0):,} the grader reads")
    if kind == "results":
        return CallResults(Raised(r.get("type"), r.get("text")) if isinstance(r, dict)
                           and r.get("$") == "raised" else decode(r, builders)
                           for r in value["items"])
    if kind == "built":
        return _built(value, builders)
    raise ValueError(f"an unknown kind of value: {str(kind)[:40]!r}")


def array_of(value):
    """The tensor or NumPy array of a tagged ``{"$": "tensor" | "ndarray", "dtype",
    "shape", "data"}`` (data flat or nested); a ValueError for a type of no numbers."""
    if value["$"] == "tensor":
        dtype = getattr(torch, str(value["dtype"]), None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"a tensor of {str(value['dtype'])[:40]}")
        return torch.tensor(value["data"], dtype=dtype).reshape(value["shape"])
    try:
        dtype = np.dtype(str(value["dtype"]))
    except TypeError:
        raise ValueError(f"an array of {str(value['dtype'])[:40]}") from None
    if dtype.kind not in "biufc":
        raise ValueError(f"an array of {dtype}")
    return np.array(value["data"], dtype=dtype).reshape(value["shape"])


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


def _exception_class(name):
    found = getattr(builtins, str(name), None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    return type(name if NAME_RE.fullmatch(str(name)) else "Error", (Exception,), {})


def _built(value, builders):
    module = str(value.get("module", "cases"))
    if module not in builders:
        raise ValueError(f"cases are not built by d2lutil.exercises.{module[:40]} here")
    made_by = importlib.import_module(f"d2lutil.exercises.{module}")
    name = str(value["name"])
    if name.startswith("_") or not callable(getattr(made_by, name, None)):
        raise ValueError(f"d2lutil.exercises.{module} has no builder {name[:40]!r}")
    return getattr(made_by, name)(*(decode(a, builders) for a in value["args"]))
