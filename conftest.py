"""pytest's root conftest: nbval compares a cell's numbers within the tolerance the cell
states in its metadata (tests/nbval_tolerance.py, applied by tests/colab_check.py too);
every other cell exactly. The browser tests' fixtures: tests/browsing.py."""

pytest_plugins = ["nbval_tolerance", "browsing"]

# `make test`'s two workers (pytest-xdist, `--dist loadfile --no-loadscope-reorder`) take
# the files whole, in the order collected. The longest go first, the rest after them in
# their own order, so that the short files at the end even out the two workers' finish.
# Seconds each in make test here: 26 and 21 for the two notebooks that train, which go
# first, side by side, rather than beside Chromium, which slows them by a quarter; then
# 59, 33 and 24 for the browser files, 35 for the shipped weights (one training run) and 20
# for the seed-shift check.
LONGEST_FIRST = ["notebooks/09_reading_the_heads.ipynb", "notebooks/08_spelling_to_sound.ipynb",
                 "tests/test_browser.py", "tests/test_shipped_weights.py",
                 "tests/test_browser_jupyter.py", "tests/test_browser_slides.py",
                 "tests/test_robust.py"]


def pytest_collection_modifyitems(items):
    rank = {path: k for k, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
