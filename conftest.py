"""pytest's root conftest: the order in which `make test`'s two workers take the files.
The browser tests' fixtures: tests/browser/browsing.py (through tests/browser/conftest.py)."""

import book

# `make test`'s two workers (pytest-xdist, `--dist loadfile --no-loadscope-reorder`) take
# the files whole, in the order collected. The longest go first, the rest after them in
# their own order, so that the short files at the end even out the two workers' finish.
# First the notebooks whose time budget (their metadata's "budget_s") is SLOW_BUDGET_S or
# more, longest first: the two that train, 26 and 21 s each in make test here, side by
# side rather than beside Chromium, which slows them by a quarter. Then the test files of
# 20 s or more: 59, 60 to 120 (a lecture run in JupyterLab and as RISE slides) and 24 s for
# the browser files, 35 for the shipped weights (one training run), 22 for a site built
# with a new notebook, 20 for the seed-shift check, about 26 for notebook 9 run once before
# its exercise 1 is answered from the hint, about 20 for both lectures run live, and about
# 60 for the site built twice, with and without the solutions.
SLOW_BUDGET_S = 20
LONGEST_FIRST = ["tests/browser/test_browser.py", "tests/library/test_shipped_weights.py",
                 "tests/browser/test_browser_jupyter.py", "tests/browser/test_browser_slides.py",
                 "tests/tools/test_new_notebook.py", "tests/notebooks/test_robust.py",
                 "tests/exercises/test_exercises_nb09.py", "tests/tools/test_lecture_live.py",
                 "tests/tools/test_student_site.py", "tests/browser/test_browser_widgets.py",
                 "tests/tools/test_widgets.py"]


def pytest_collection_modifyitems(items):
    budget = {book.relpath_of(p): book.facts(book.read(p)).get("budget_s") or 0
              for p in book.chapter_notebooks()}
    slow = sorted((rel for rel, s in budget.items() if s >= SLOW_BUDGET_S), key=budget.get,
                  reverse=True)
    rank = {path: k for k, path in enumerate(slow + LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
