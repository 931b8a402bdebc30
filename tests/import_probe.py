"""What a fresh Python has imported after importing d2lutil's modules.

Starting Python and importing torch takes seconds, so test_exercises.py and
test_package.py share one such process: ``imported_modules()`` runs it once per
pytest session and returns what each of them checks.
"""

import functools
import json
import subprocess
import sys

# First the exercises (d2lutil.exercises and every exercises.nbNN), then every other module.
PROBE = """
import importlib, json, pkgutil, sys
import d2lutil, d2lutil.exercises
for info in pkgutil.iter_modules(d2lutil.exercises.__path__):
    importlib.import_module("d2lutil.exercises." + info.name)
after_exercises = sorted(sys.modules)
for info in pkgutil.iter_modules(d2lutil.__path__):
    importlib.import_module("d2lutil." + info.name)
print(json.dumps({"exercises": after_exercises, "every module": sorted(sys.modules)}))
"""


@functools.cache
def imported_modules():
    """{"exercises": names in sys.modules once the exercises are imported,
    "every module": names once every d2lutil module is, "stderr": what the process wrote there}.
    """
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    report = {stage: set(names) for stage, names in json.loads(out.stdout).items()}
    return {**report, "stderr": out.stderr}
