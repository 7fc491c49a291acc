"""How fast is the whole-tree pass of one version next to another, measured
in one process?

The whole-tree pass (``Program`` built, its fixpoint, the hazards, the
findings) runs in the run's own process after the workers are done, so its
CPU adds to the wall clock one for one.  On a busy machine two versions
timed as separate processes (``bench/commit_speed.py``) differ by 10-20 %
from one run to the next, more than most changes to the pass move it.  Here
each version first extracts the facts of the tree in a process of its own
(``--jobs 1``, so the facts do not depend on the workers) and saves them;
then one process loads both versions' ``cslint`` packages under names of
their own and runs each version's pass on its own facts, alternately
(old, new, new, old, ...), with the collector off as in a run.  The table
gives each side's median process CPU of the pass and of its fixpoint
(``Program.solve``) alone, the ratio of the medians and the median of the
per-pair ratios, and whether both versions found the same (path, line,
code, message) list.  ``--helper`` runs the pass as a run with workers does
(the ordering helper forked beside it; only this process's CPU counts).

    .venv/bin/python bench/pass_ab.py --old main --new . --repeat 5 [TREE]

Default tree: vLLM as bench/realtree.py pins it.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import io
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
from commit_speed import checkout  # noqa: E402  (run as python bench/NAME.py: bench/ is first on sys.path)
from realtree import pinned  # noqa: E402

# Run with a version's checkout first on sys.path: its facts, as the pass receives them.
DUMP = """\
import pickle, sys
sys.path[0] = sys.argv[1]
sys.setrecursionlimit(100000)
from cslint.engine import run
from cslint.api import check_paths
try:  # a version with lazy extraction: summaries nobody read yet are worked out where their trees are kept
    from cslint.analysis.records import fill_pending
except ImportError:
    fill_pending = None
def spy(facts_by_real, all_files, knowledge, bar, parallel=False, callee_facts=None, module_of=None):
    if fill_pending is not None:
        # saved, a pending summary could not be worked out in the process that loads it:
        # work every one out here, so both sides' passes read whole facts
        for group in (facts_by_real.values(), (callee_facts or {}).values()):
            for facts in group:
                fill_pending(facts.functions)
    with open(sys.argv[3], "wb") as out:
        pickle.dump((facts_by_real, all_files, callee_facts), out, protocol=pickle.HIGHEST_PROTOCOL)
    return []
run._analysis_findings = spy
check_paths([sys.argv[2]], cache=False, jobs=1)
"""


class _Renamed(pickle.Unpickler):
    """Loads facts pickled by ``cslint`` as objects of a renamed copy of it."""

    def __init__(self, data: bytes, package: str):
        super().__init__(io.BytesIO(data))
        self.package = package

    def find_class(self, module, name):
        if module == "cslint" or module.startswith("cslint."):
            module = self.package + module[len("cslint"):]
        return super().find_class(module, name)


class Side:
    """One version: its package loaded under its own name, its facts."""

    def __init__(self, package: str, facts: bytes):
        self.package = package
        self.facts = facts
        self.run = importlib.import_module(package + ".engine.run")
        self.program = importlib.import_module(package + ".analysis.program")
        self.presets = importlib.import_module(package + ".presets")
        self.config = importlib.import_module(package + ".config")
        self.times: list = []  # (pass CPU, fixpoint CPU)
        self.found = None

    def once(self, helper: bool) -> None:
        facts_by_real, all_files, callee_facts = _Renamed(self.facts, self.package).load()
        names: list = []
        for f in all_files:
            for name in f.settings.presets:
                if name not in names:
                    names.append(name)
        knowledge = self.presets.load_presets(names or list(self.config.Settings().presets))
        program = self.program.Program
        solve = program.solve
        spent = []

        def timed(instance):
            start = time.process_time()
            solve(instance)
            spent.append(time.process_time() - start)

        program.solve = timed
        try:
            start = time.process_time()
            found = self.run._analysis_findings(facts_by_real, all_files, knowledge, None, helper, callee_facts)
            total = time.process_time() - start
        finally:
            program.solve = solve
        self.times.append((total, spent[0]))
        digest = hashlib.sha256(repr(sorted((f.path, f.line, f.code, f.message) for f in found)).encode()).hexdigest()
        self.found = (len(found), digest)


def dump(directory: str, tree: str, python: str, out: str) -> bytes:
    subprocess.run([python, "-c", DUMP, directory, tree, out], check=True, cwd=directory)
    with open(out, "rb") as f:
        return f.read()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", default=None, help="default: the pinned vLLM tree of bench/realtree.py")
    parser.add_argument("--old", default="main")
    parser.add_argument("--new", default=ROOT)
    parser.add_argument("--repeat", type=int, default=5, help="pairs of runs (default: 5)")
    parser.add_argument("--helper", action="store_true", help="fork the ordering helper, as a run with workers does")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    args.tree = os.path.abspath(args.tree or pinned("vllm") or parser.error("the pinned vLLM tree cannot be had; pass a tree"))
    sys.setrecursionlimit(100000)
    with tempfile.TemporaryDirectory(prefix="cslint-pass-ab-") as tmp, \
            checkout(args.old) as old_dir, checkout(args.new) as new_dir:
        sides = []
        for index, directory in enumerate((old_dir, new_dir)):
            package = f"cslint_ab{index}"
            shutil.copytree(os.path.join(directory, "cslint"), os.path.join(tmp, package))
            sides.append((package, dump(directory, args.tree, args.python, os.path.join(tmp, f"{package}.pickle"))))
        sys.path.insert(0, tmp)
        old, new = Side(*sides[0]), Side(*sides[1])
        gc.disable()  # as in a run (cslint/api.py)
        for index in range(args.repeat):
            for side in ((old, new) if index % 2 == 0 else (new, old)):
                side.once(args.helper)
    print(f"tree: {args.tree}  ({args.repeat} alternating pairs in one process, "
          f"{'with' if args.helper else 'without'} the ordering helper)")
    print(f"{'version':<28} {'pass med':>9} {'min':>7} {'max':>7} {'solve med':>10} {'min':>7} {'max':>7}")
    for label, side in ((f"old {args.old}", old), (f"new {args.new}", new)):
        passes, solves = [t for t, _ in side.times], [s for _, s in side.times]
        print(f"{label[:28]:<28} {statistics.median(passes):>9.3f} {min(passes):>7.3f} {max(passes):>7.3f} "
              f"{statistics.median(solves):>10.3f} {min(solves):>7.3f} {max(solves):>7.3f}")
    for index, what in ((0, "pass"), (1, "solve")):
        before = [t[index] for t in old.times]
        after = [t[index] for t in new.times]
        pairs = statistics.median(a / b for b, a in zip(before, after))
        print(f"new/old {what} CPU: ratio of medians {statistics.median(after) / statistics.median(before):.3f}; "
              f"median of pair ratios {pairs:.3f}")
    same = old.found == new.found
    print(f"findings: old {old.found[0]}, new {new.found[0]}, {'the same' if same else 'DIFFERENT'} "
          "(path, line, code, message; compare the JSON with bench/realtree.py)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
