"""Cases of function answers as JSON: what the student edition and the grader send.

``encode`` takes a list of argument tuples of ints, floats, bools, strings, tensors, NumPy
arrays, :class:`d2lutil.exercises.modules.Case` and objects made by a public builder of
``d2lutil.exercises.cases`` or ``.public`` (which record it as ``built_by``: (builder,
args), or (module, builder, args)); ``decode`` gives them back.
Anything else is a TypeError naming it: a case must travel as data, never as a pickle.
"""

import importlib

import numpy as np
import torch

BUILDERS = ("cases", "public")  # the modules whose public builders may make a case


def encode(value):
    """``value`` as tagged JSON (see the module's doc)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {"$": "case", "fields": [encode(v) for v in value]}
    if isinstance(value, tuple):
        return {"$": "tuple", "items": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, torch.Tensor):
        return {"$": "tensor", "dtype": str(value.dtype).replace("torch.", ""),
                "shape": list(value.shape), "data": value.detach().cpu().flatten().tolist()}
    if isinstance(value, np.ndarray):
        return {"$": "ndarray", "dtype": str(value.dtype), "shape": list(value.shape),
                "data": value.ravel().tolist()}
    built_by = getattr(value, "built_by", None)
    if built_by is not None:  # (builder, args) of cases, or (module, builder, args)
        module, name, args = built_by if len(built_by) == 3 else ("cases", *built_by)
        return {"$": "built", "module": module, "name": name,
                "args": [encode(a) for a in args]}
    raise TypeError(f"a case cannot hold {type(value).__name__}: only numbers, strings, "
                    "tensors, arrays, Case and objects of d2lutil.exercises.cases travel")


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


def decode(value):
    """The value :func:`encode` was given."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    kind = value.get("$")
    if kind == "tuple":
        return tuple(decode(v) for v in value["items"])
    if kind == "case":
        from d2lutil.exercises.modules import Case

        return Case(*(decode(v) for v in value["fields"]))
    if kind in ("tensor", "ndarray"):
        return array_of(value)
    if kind == "built":
        module = str(value.get("module", "cases"))
        if module not in BUILDERS:
            raise ValueError(f"cases are not built by d2lutil.exercises.{module[:40]}")
        builders = importlib.import_module(f"d2lutil.exercises.{module}")
        name = str(value["name"])
        if name.startswith("_") or not callable(getattr(builders, name, None)):
            raise ValueError(f"d2lutil.exercises.{module} has no builder {name[:40]!r}")
        return getattr(builders, name)(*(decode(a) for a in value["args"]))
    raise ValueError(f"an unknown kind of case value: {str(kind)[:40]!r}")
