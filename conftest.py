"""pytest's root conftest: nbval compares a cell's numbers within the tolerance the cell
states in its metadata (tests/nbval_tolerance.py, applied by tests/colab_check.py too);
every other cell exactly. The browser tests' fixtures: tests/browsing.py."""

pytest_plugins = ["nbval_tolerance", "browsing"]
