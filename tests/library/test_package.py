"""d2lutil as a package: light to import, complete in what it exports."""

import d2lutil
from import_probe import imported_modules


def test_import_does_not_pull_in_d2l_or_torchvision():
    """Not by d2lutil, nor by any of its modules (tasks, cost, alignment, diagrams, ...)."""
    imported = imported_modules()
    assert {"d2lutil.tasks", "d2lutil.cost", "d2lutil.alignment",
            "d2lutil.translator"} <= imported["every module"]
    assert {"d2l", "torchvision", "pandas", "scipy"} & imported["every module"] == set()
    assert imported["stderr"] == ""


def test_every_exported_name_exists_and_is_documented():
    for name in d2lutil.__all__:
        obj = getattr(d2lutil, name)
        assert obj.__doc__ and obj.__doc__.strip(), name
