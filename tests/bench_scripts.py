"""Load a bench/ script as a module, for the tests of the bench scripts.

The scripts run as ``python bench/NAME.py``, which puts bench/ first on
sys.path so that they import their siblings (``realtree``, ``commit_speed``)
by name; the loader does the same.  The module is registered in
sys.modules under ``bench_NAME`` before it runs, because dataclasses look
their module up there.
"""

from __future__ import annotations

import importlib.util
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.join(REPO_ROOT, "bench")


def load_bench(name: str):
    """The module of bench/NAME.py, loaded afresh."""
    if BENCH_DIR not in sys.path:
        sys.path.insert(0, BENCH_DIR)
    spec = importlib.util.spec_from_file_location(f"bench_{name}", os.path.join(BENCH_DIR, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
