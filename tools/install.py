"""`uv pip install ARGS` into this Python's environment, from the sources pip would use.

`make` fills .venv with uv (pinned in requirements.txt): it fetches and unpacks wheels in
parallel and links them from its cache, about four times faster than pip here on a
first install. uv reads no pip configuration, though, so on a machine whose pip.conf or
PIP_* variables name a mirror, a folder of wheels or a constraints file, it would go past
them to PyPI. This passes pip's choice of each (`pip config list`, where a variable beats
a file and pip's `install` section beats `global`) as uv's flags, with pip's rule for
several indexes: the best version over all of them (uv's default takes the first index
that has the package), and the system's certificates, as pip trusts them. Like pip, it
compiles the modules to bytecode as it installs them: uv would not, and where
PYTHONDONTWRITEBYTECODE is set (as on this machine), every kernel would then compile torch
again on import (make test: 225 s against 168 s).

    python tools/install.py -r requirements.txt
"""

import ast
import os
import subprocess
import sys

# pip's option: uv's flag. Each value may hold several entries, separated by spaces.
FLAGS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url",
         "find-links": "--find-links", "constraint": "--constraint"}
# Where pip reads an option, most binding first.
SECTIONS = [":env:", "install", "global"]


def source_flags(listing):
    """uv's flags for the output of `pip config list` (lines like section.key='value')."""
    found = {}
    for line in listing.splitlines():
        name, sep, value = line.partition("=")
        section, _, key = name.rpartition(".")
        if not sep or key not in FLAGS or section not in SECTIONS:
            continue
        rank = SECTIONS.index(section)
        if key not in found or rank < found[key][0]:
            found[key] = (rank, ast.literal_eval(value).split())
    flags = []
    for key, flag in FLAGS.items():
        for entry in found.get(key, (0, []))[1]:
            flags += [flag, entry]
    return flags + ["--index-strategy", "unsafe-best-match", "--system-certs"]


def command(args, python=sys.executable):
    """The uv command line installing ``args`` into the environment of ``python``."""
    listing = subprocess.run([python, "-m", "pip", "config", "list"], check=True,
                             capture_output=True, text=True).stdout
    uv = os.path.join(os.path.dirname(python), "uv")
    return [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", python,
            *source_flags(listing), *args]


if __name__ == "__main__":
    sys.exit(subprocess.run(command(sys.argv[1:])).returncode)
