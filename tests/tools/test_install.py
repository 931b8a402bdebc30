"""tools/install.py: uv installs from the package sources pip is configured with."""

import pathlib
import sys

import install

LISTING = """\
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.extra-index-url='file:///srv/a/simple file:///srv/b/simple'
global.find-links='/srv/wheels'
global.index-url='https://global.example/simple'
install.index-url='https://install.example/simple'
:env:.find-links='/env/wheels /env/more'
"""


def test_each_option_comes_from_where_pip_reads_it():
    flags = install.source_flags(LISTING)
    assert flags == [
        "--index-url", "https://install.example/simple",  # install beats global
        "--extra-index-url", "file:///srv/a/simple", "--extra-index-url", "file:///srv/b/simple",
        "--find-links", "/env/wheels", "--find-links", "/env/more",  # a variable beats files
        "--index-strategy", "unsafe-best-match", "--system-certs"]


def test_without_pip_configuration_uv_uses_its_defaults_with_pips_index_rule():
    assert install.source_flags("") == ["--index-strategy", "unsafe-best-match",
                                        "--system-certs"]
    # Other sections (another command's) and options pip has but uv takes otherwise are left out.
    assert install.source_flags("download.index-url='https://x/simple'\n"
                                "global.timeout='60'\n") == install.source_flags("")


def test_the_command_installs_into_the_given_python_with_its_uv(monkeypatch):
    class Done:
        stdout = "global.constraint='/etc/pip/constraints.txt'\n"

    calls = []
    monkeypatch.setattr(install.subprocess, "run", lambda *a, **k: calls.append(a) or Done())
    cmd = install.command(["-r", "requirements.txt"], python="/v/bin/python")
    assert calls == [(["/v/bin/python", "-m", "pip", "config", "list"],)]
    assert cmd[:7] == ["/v/bin/uv", "pip", "install", "--quiet", "--compile-bytecode",
                       "--python", "/v/bin/python"]
    assert cmd[7:9] == ["--constraint", "/etc/pip/constraints.txt"]
    assert cmd[-2:] == ["-r", "requirements.txt"]


def test_this_venv_was_filled_by_the_pinned_uv():
    import importlib.metadata

    import book

    assert book.pin("uv") == f"uv=={importlib.metadata.version('uv')}"
    assert (pathlib.Path(sys.executable).parent / "uv").exists()
