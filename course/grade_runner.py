"""Run one student's notebook and collect its answers: the part of course/grade.py that runs
next to the student's code (inside the bubblewrap sandbox when there is one).

``python grade_runner.py JOB.json`` runs the job's notebook in a fresh kernel (each cell
under a time limit), adds a last cell (``ANSWERS_CELL``) that writes the answer variables
as JSON with the sealed package's codec, and prints one line of JSON: the status, the
failing cells and the answers' text. Nothing is checked here.
"""

import asyncio
import ctypes
import json
import os
import stat
import subprocess
import sys

# nbformat imports jsonschema, and jsonschema imports rfc3987_syntax where it is installed
# (Jupyter's server brings it), which compiles its grammar as it is imported: 1.3 s of the
# 5 s a submission takes. Neither nbformat nor nbclient checks that format, so the runner
# goes without it (an import of it fails, and jsonschema then leaves the format out).
sys.modules.setdefault("rfc3987_syntax", None)

TIMEOUT_MARK = "GraderCellTimeout"  # the error a cell gets when its time limit interrupts it
TEXT_LIMIT = 300  # characters kept of an error message

# The injected last cell. It runs in the student's kernel and trusts nothing there: it only
# reads the named variables and writes them to ANSWERS_PATH with the sealed package's codec.
ANSWERS_CELL = r'''
def __grader_answers(names, functions, path, max_items):
    import importlib
    import json
    import sys

    codec = importlib.import_module("d2lutil.exercises.codec")

    def results_of(function, module, exercise, part, cases):
        checker = getattr(importlib.import_module(module), exercise).parts[part][1]
        run = getattr(checker, "run", None)  # a class answer: run on each case
        # the grader's cases, public and hidden; or, where they cannot travel as data, the
        # kernel's module's
        cases = checker.cases() if cases is None else codec.decode(cases)
        results = []
        for case in cases:
            try:
                value = run(function, case) if run else function(*case)
                results.append(codec.encode(value, max_items, loose=True))
            except Exception as error:
                results.append({"$": "raised", "type": type(error).__name__,
                                "text": str(error)[:300]})
        return {"$": "results", "items": results}

    answers = {}
    for name in names:
        if name not in globals():
            answers[name] = {"$": "missing"}
            continue
        value = globals()[name]
        try:
            if name in functions and callable(value):
                answers[name] = results_of(value, *functions[name])
            else:
                answers[name] = codec.encode(value, max_items, loose=True)
        except Exception as error:
            answers[name] = {"$": "unreadable", "error": type(error).__name__}
    variants = sys.modules.get("d2lutil.exercises.variants")
    entered = getattr(variants, "_state", {}).get("id") if variants else None
    answers["$student_id"] = entered if isinstance(entered, str) else None
    with open(path, "w", encoding="utf-8") as file:
        json.dump(answers, file)


__grader_answers(NAMES, FUNCTIONS, ANSWERS_PATH, MAX_ITEMS)
del __grader_answers
'''


def answers_cell(names, functions, path, max_items):
    """The source of the injected last cell for these answer names."""
    return (ANSWERS_CELL.replace("NAMES", repr(list(names)))
            .replace("FUNCTIONS", repr({k: list(v) for k, v in functions.items()}))
            .replace("ANSWERS_PATH", repr(path)).replace("MAX_ITEMS", repr(max_items)))


def _classes():
    """nbclient's client and jupyter_client's kernel manager, adapted (imported late: the
    ``--limits`` launcher needs neither)."""
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    class KernelManager(AsyncKernelManager):
        """A kernel manager whose connection file the kernel can read as its own user."""

        def write_connection_file(self, **kwargs):
            super().write_connection_file(**kwargs)
            os.chmod(self.connection_file, 0o644)

    class Client(NotebookClient):
        """nbclient's client keeping no outputs: a huge output costs the runner nothing."""

        def output(self, outs, msg, display_id, cell_index):
            return None

        def clear_output(self, outs, msg, cell_index):
            return None

    return KernelManager, Client


def _not_dumpable():
    """Other processes of the same user cannot open this one's files in /proc."""
    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        pass


def run(job):
    """Execute the job's notebook; return the result as a dict (see the module's doc)."""
    import nbformat
    from nbclient.exceptions import DeadKernelError

    KernelManager, Client = _classes()
    result = {"status": "graded", "errors": [], "timeouts": [], "died_in": None,
              "answers": None, "answers_size": 0}
    nb = nbformat.read(job["notebook"], as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(answers_cell(
        job["names"], job["functions"], job["answers_path"], job["max_items"])))
    client = Client(
        nb, timeout=job["cell_timeout"], interrupt_on_timeout=True, allow_errors=True,
        error_on_timeout={"ename": TIMEOUT_MARK, "evalue": "", "traceback": []},
        kernel_name="python3", kernel_manager_class=KernelManager, startup_timeout=60,
        resources={"metadata": {"path": job["home"]}}, iopub_timeout=5)

    def executed(cell, cell_index, execute_reply):
        content = execute_reply.get("content", {}) if execute_reply else {}
        if content.get("status") != "error":
            return
        if content.get("ename") == TIMEOUT_MARK:
            result["timeouts"].append(cell_index)
        else:
            result["errors"].append({"cell": cell_index,
                                     "ename": str(content.get("ename", ""))[:100],
                                     "evalue": str(content.get("evalue", ""))[:TEXT_LIMIT]})

    def started(cell, cell_index):
        result["died_in"] = cell_index  # kept only if the kernel dies in this cell

    client.on_cell_execute = started
    client.on_cell_executed = executed
    start = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
             "stderr": subprocess.DEVNULL}
    if job.get("kernel_uid") is not None:
        start.update(user=job["kernel_uid"], group=job["kernel_uid"], extra_groups=[])
    try:
        client.execute(**start)
        result["died_in"] = None
    except DeadKernelError:
        result["status"] = "kernel died"
    except Exception as error:  # e.g. a kernel whose messages the student broke
        result["status"] = "kernel failed"
        result["error"] = f"{type(error).__name__}: {error}"[:TEXT_LIMIT]
    last = len(nb.cells) - 1
    if any(e["cell"] == last for e in result["errors"]) or last in result["timeouts"]:
        result["status"] = "answers not collected"
    data = _read_capped(job["answers_path"], job["max_answer_bytes"] + 1)
    if data is not None:
        result["answers_size"] = len(data)
        if len(data) <= job["max_answer_bytes"]:
            result["answers"] = data.decode("utf-8", errors="replace")
    return result


def _read_capped(path, limit):
    """At most ``limit`` bytes of the regular file ``path`` (never blocks), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return file.read(limit)


def limit_and_exec(argv):
    """``--limits DATA PROCESSES FILESIZE -- COMMAND...``: set the resource limits (bytes of
    data segment, processes and threads of the user, bytes of a file; no core files), then
    become COMMAND. Limits are inherited by everything COMMAND starts."""
    import resource

    data, processes, file_size = (int(a) for a in argv[:3])
    for which, value in ((resource.RLIMIT_DATA, data), (resource.RLIMIT_NPROC, processes),
                         (resource.RLIMIT_FSIZE, file_size), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(which, (value, value))
    command = argv[argv.index("--") + 1:]
    os.execv(command[0], command)


def main(argv):
    if argv[1:2] == ["--limits"]:
        limit_and_exec(argv[2:])
    _not_dumpable()
    with open(argv[1], encoding="utf-8") as file:
        job = json.load(file)
    try:
        result = run(job)
    except Exception as error:  # the notebook could not even start: say why, in the row
        result = {"status": "runner error", "error": f"{type(error).__name__}: {error}"[:500]}
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    asyncio.set_event_loop(asyncio.new_event_loop())
    sys.exit(main(sys.argv))
