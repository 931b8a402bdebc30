"""d2lutil as a package: light to import, complete in what it exports."""

import subprocess
import sys

import d2lutil


def test_import_does_not_pull_in_d2l_or_torchvision():
    code = ("import sys, d2lutil, d2lutil.tasks, d2lutil.cost, d2lutil.alignment; "
            "print(sorted(m for m in ('d2l', 'torchvision', 'pandas', 'scipy') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
    assert out.stderr == ""


def test_every_exported_name_exists_and_is_documented():
    for name in d2lutil.__all__:
        obj = getattr(d2lutil, name)
        assert obj.__doc__ and obj.__doc__.strip(), name
