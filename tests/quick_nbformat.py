"""A pytest plugin that the Makefile's test targets load before any other
(`python -m pytest -p tests.quick_nbformat`): nbval and the tests import nbformat, which
imports jsonschema, which imports rfc3987_syntax where it is installed (Jupyter's server
brings it); that module compiles a grammar as it is imported, 1 s of each pytest
process's and worker's start. No test checks that format, so pytest goes without it (an
import of it fails, and jsonschema then leaves the format out), as the grader's runner
does (course/grade_runner.py, which runs alone in its sandbox, so it has its own line)."""

import sys

sys.modules.setdefault("rfc3987_syntax", None)
