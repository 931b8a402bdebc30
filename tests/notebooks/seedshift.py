"""Shift every seed a program sets by K: the shim behind tests/notebooks/robust.py.

    import seedshift
    seedshift.install(3)   # from now on torch.manual_seed(0) seeds with 3, and so on

``install(k)`` replaces, at module attribute level (so a later ``from torch import
manual_seed`` or ``import d2lutil`` gets the replacement too):

- ``torch.manual_seed`` and ``torch.random.manual_seed`` (one function in torch);
- ``torch.Generator`` by a subclass whose ``manual_seed`` adds K. ``torch.Generator`` is a
  C type whose methods cannot be patched; the subclass is still a ``torch.Generator`` for
  torch's functions (``generator=`` arguments), and ``isinstance(g, torch.Generator)`` stays
  true for every generator, ``torch.default_generator`` and those made before included;
- ``numpy.random.default_rng``, ``numpy.random.seed`` and ``numpy.random.RandomState``
  (a subclass, as for torch's generator);
- ``random.seed`` and ``random.Random`` (a subclass).

Only integer seeds are shifted: ``None`` (fresh entropy), a ``SeedSequence``, a NumPy
``Generator`` or a string is passed on unchanged. A seed that fits a function's range
(64 bits for torch, 32 for NumPy's legacy ``seed``/``RandomState``) is shifted modulo that
range, so it still fits. ``install`` again with another K replaces the shift; ``uninstall``
puts the originals back. Only the standard library is imported at the top: torch and
NumPy are patched if they can be imported.
"""

import numbers
import random

_K = 0
_ORIGINALS = {}  # (module, attribute name) -> the original object


def shift(seed, modulus=None):
    """``seed + K`` for an integer seed (modulo ``modulus`` if the seed fits in it); any
    other seed (None, bool, a SeedSequence or Generator, a string) unchanged."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        return seed
    shifted = int(seed) + _K
    if modulus is not None and 0 <= seed < modulus:
        shifted %= modulus
    return shifted


def _seed_of(args, kwargs, name):
    """The first positional argument or keyword ``name`` (None if neither), and a setter
    that returns (args, kwargs) with it replaced."""
    if args:
        return args[0], lambda value: ((value, *args[1:]), kwargs)
    return kwargs.get(name), lambda value: (args, {**kwargs, name: value} if name in kwargs
                                            else kwargs)


def _shifted_class(base, seed_methods, modulus):
    """A subclass of ``base`` whose ``seed_methods`` shift their first argument, and for
    which ``isinstance`` and ``issubclass`` answer as for ``base`` itself."""

    class Meta(type(base)):
        def __instancecheck__(cls, obj):
            return isinstance(obj, base)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, base)

    def wrap(method_name):
        method = getattr(base, method_name)
        arg_name = "seed" if method_name != "seed" or base is not random.Random else "a"

        def shifted(self, *args, **kwargs):
            seed, replace = _seed_of(args, kwargs, arg_name)
            args, kwargs = replace(shift(seed, modulus))
            return method(self, *args, **kwargs)

        shifted.__name__ = method_name
        shifted.__doc__ = f"{base.__name__}.{method_name} with the seed shifted by seedshift"
        return shifted

    namespace = {name: wrap(name) for name in seed_methods}
    namespace["__module__"] = __name__
    namespace["__doc__"] = f"{base.__module__}.{base.__name__} whose seeds are shifted by K."
    return Meta(f"Shifted{base.__name__}", (base,), namespace)


def _shifted_function(function, name, modulus=None):
    def shifted(*args, **kwargs):
        seed, replace = _seed_of(args, kwargs, name)
        args, kwargs = replace(shift(seed, modulus))
        return function(*args, **kwargs)

    shifted.__name__ = function.__name__
    shifted.__qualname__ = getattr(function, "__qualname__", function.__name__)
    shifted.__doc__ = function.__doc__
    shifted.__wrapped__ = function
    return shifted


def _replace(module, attribute, new):
    _ORIGINALS.setdefault((module, attribute), getattr(module, attribute))
    setattr(module, attribute, new)


def install(k):
    """Shift every seed set from now on by ``k`` (an int); see the module's docstring."""
    global _K
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    _K = int(k)
    if _ORIGINALS:  # installed already: the replacements read _K
        return
    _replace(random, "seed", _shifted_function(random.seed, "a"))
    _replace(random, "Random", _shifted_class(random.Random, ["seed"], None))
    try:
        import numpy.random
    except ImportError:
        pass
    else:
        np_random = numpy.random
        _replace(np_random, "default_rng", _shifted_function(np_random.default_rng, "seed"))
        _replace(np_random, "seed", _shifted_function(np_random.seed, "seed", 2**32))
        _replace(np_random, "RandomState",
                 _shifted_class(np_random.RandomState, ["__init__", "seed"], 2**32))
    try:
        import torch
        import torch.random
    except ImportError:
        pass
    else:
        manual_seed = _shifted_function(torch.random.manual_seed, "seed", 2**64)
        _replace(torch, "manual_seed", manual_seed)
        _replace(torch.random, "manual_seed", manual_seed)
        _replace(torch, "Generator", _shifted_class(torch.Generator, ["manual_seed"], 2**64))


def uninstall():
    """Put back every original that ``install`` replaced."""
    global _K
    for (module, attribute), original in _ORIGINALS.items():
        setattr(module, attribute, original)
    _ORIGINALS.clear()
    _K = 0


def installed_k():
    """The K in force (0 when not installed)."""
    return _K
