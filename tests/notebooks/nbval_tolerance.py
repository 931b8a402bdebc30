"""nbval compares a cell's numbers within the tolerance the cell states (CONTRIBUTING.md).

nbval compares a cell's stored outputs with the new ones character by character. That is
right for nearly every cell; it is wrong for a cell whose printed digits are float round-off
amplified by training, which another CPU rounds differently. Such a cell states its
tolerance in its metadata::

    "nbval-tolerance": {"atol": 0.03, "rtol": 0.05, "why": "a model trained 700 steps"}

and its new output then passes exactly when it reads as the stored one except for its
numbers, and every number ``x`` lies within ``atol + rtol * |ref|`` of the stored ``ref``
(numpy.isclose's rule). A percentage is read as a fraction (``71%`` is 0.71), so one
``atol`` serves fractions and percentages; a count is served by ``rtol``. The words, the
order of the lines and the count of numbers must agree exactly: a changed ranking, a
different head or a new line fails as before. ``why`` is required: each tolerance says
which round-off it covers. Every other cell is compared exactly.

The mechanism: for each such cell, before nbval compares, a new text output that matches
its stored text within the tolerance is replaced by the stored text; any other output is
left as computed, so nbval's own comparison fails on it and shows the difference.
"""

import math
import re

KEY = "nbval-tolerance"
FIELDS = {"atol", "rtol", "why"}

# A number as the notebooks print it: optional sign, digits with optional thousands commas,
# optional decimals and exponent, optional percent sign. Not a digit inside a name (ex1, W_o).
NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?%?(?![\w])")


def tolerance(metadata, where="cell"):
    """The ``(atol, rtol)`` a cell's metadata states, or None; a bad entry raises ValueError."""
    spec = metadata.get(KEY)
    if spec is None:
        return None
    if not isinstance(spec, dict) or set(spec) - FIELDS or "why" not in spec:
        raise ValueError(f"{where}: {KEY} must be a mapping with 'why' and 'atol' and/or "
                         f"'rtol', got {spec!r}")
    if not str(spec["why"]).strip():
        raise ValueError(f"{where}: {KEY} 'why' is empty: say which round-off it covers")
    atol, rtol = spec.get("atol", 0), spec.get("rtol", 0)
    for name, value in (("atol", atol), ("rtol", rtol)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
                math.isfinite(value) and value >= 0):
            raise ValueError(f"{where}: {KEY} {name!r} must be a number >= 0, got {value!r}")
    if atol == 0 and rtol == 0:
        raise ValueError(f"{where}: {KEY} states neither 'atol' nor 'rtol' above 0")
    return float(atol), float(rtol)


def value(token):
    """The float a printed number stands for; a percentage as a fraction."""
    number = float(token.rstrip("%").replace(",", ""))
    return number / 100 if token.endswith("%") else number


def split_numbers(text):
    """``(words, numbers)``: the text around the numbers, and the numbers' tokens."""
    return NUMBER.split(text), NUMBER.findall(text)


def close(reference, output, atol, rtol):
    """Whether ``output`` reads as ``reference`` but for numbers within the tolerance."""
    ref_words, ref_numbers = split_numbers(reference)
    out_words, out_numbers = split_numbers(output)
    if ref_words != out_words or len(ref_numbers) != len(out_numbers):
        return False
    return all(abs(value(o) - value(r)) <= atol + rtol * abs(value(r))
               for r, o in zip(ref_numbers, out_numbers, strict=True))


def _texts(output):
    """The (container, key) pairs of an output's text fields nbval compares."""
    if output.get("output_type") == "stream":
        yield output, "text"
    for mime in ("text/plain", "text/html"):
        if mime in output.get("data", {}):
            yield output["data"], mime


def _joined(text):
    return "".join(text) if isinstance(text, list) else text


def snap(reference_outputs, test_outputs, atol, rtol):
    """``test_outputs`` with each text that is within tolerance of its stored one replaced
    by the stored text (outputs are paired in order; unpaired ones are left alone)."""
    for ref, out in zip(reference_outputs, test_outputs, strict=False):
        if (ref.get("output_type"), ref.get("name")) != (out.get("output_type"),
                                                         out.get("name")):
            continue
        for (ref_box, key), (out_box, out_key) in zip(_texts(ref), _texts(out), strict=False):
            if key == out_key and close(_joined(ref_box[key]), _joined(out_box[key]),
                                        atol, rtol):
                out_box[key] = ref_box[key]
    return test_outputs


def pytest_collection_modifyitems(items):
    """Give each nbval cell item whose metadata states a tolerance the comparison above."""
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is None or not hasattr(item, "compare_outputs"):
            continue
        where = f"{item.nodeid} (cell id {cell.get('id')})"
        stated = tolerance(cell.get("metadata", {}), where)
        if stated is not None:
            item.compare_outputs = _tolerant(item.compare_outputs, *stated)


def _tolerant(compare, atol, rtol):
    def compare_outputs(test, ref, skip_compare=None):
        return compare(snap(ref, test, atol, rtol), ref, skip_compare)
    return compare_outputs
