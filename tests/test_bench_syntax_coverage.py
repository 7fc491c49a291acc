"""bench/syntax_coverage.py times cslint as an installed copy runs: with byte code compiled ahead.

An installation holds compiled byte code (``pip install`` compiles it); a
checkout on a machine that sets ``PYTHONDONTWRITEBYTECODE`` compiles every
cslint module at each start, serial time no user pays.  The bench times both:
these tests hold that the two environments really differ that way.
"""

from __future__ import annotations

import os

from bench_scripts import REPO_ROOT, load_bench


def test_the_installed_environment_reads_byte_code_compiled_ahead(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    syntax_coverage = load_bench("syntax_coverage")
    installed, uncompiled = syntax_coverage.bytecode_environments(str(tmp_path))

    assert installed["PYTHONPYCACHEPREFIX"] == str(tmp_path)
    assert "PYTHONDONTWRITEBYTECODE" not in installed
    assert uncompiled["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "PYTHONPYCACHEPREFIX" not in uncompiled
    # the prefix mirrors the absolute paths of what was compiled: cslint's own modules are there
    compiled_cli = [name for name in os.listdir(tmp_path.joinpath(*REPO_ROOT.strip(os.sep).split(os.sep), "cslint"))
                    if name.startswith("cli.") and name.endswith(".pyc")]
    assert compiled_cli
