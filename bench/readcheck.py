"""Does the fixpoint know every table entry a step reads?

``Program.solve`` steps a function again only where an entry of its read
list (:func:`cslint.analysis.stepreads.table_reads`) changed.  An entry a
step reads that is not on the list is a change the fixpoint may miss
(unless the function is stepped again for another reason), so the list
must hold every read.  This runs ``cslint check --no-cache --jobs 1`` on a
tree with the fixpoint's tables (fields, returns and their parts,
parameters, calling contexts, collective reach) replaced by dicts that note
each read made during a step, then prints the functions whose step read an
entry missing from their read list, with the first stack that read it.

Left out as reads, since a step never waits on them: another function's
parameters (a step adds to them, ``_pass_arguments``), the function's own
returns and reach (it writes them), its own calling context where it reads
none (:func:`~cslint.analysis.callercontext.reads_no_context`), and the
lazy fill of a split return (``ProgramReads._returned_part``), which reads
the callee's own tables and is covered by the callee's return entry.

    .venv/bin/python bench/readcheck.py [TREE ...] [--config FILE] [--trace N]

TREE: a directory or a pinned tree's name (vllm, deepspeed, trtllm, ...;
default vllm); a pinned tree is linted with the settings bench/realtree.py
gives it.  Exit status 1 where some read is missing.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: the fixpoint's tables: attribute of Program -> how its key names a read entry
#: (the entry kinds of stepreads.table_reads)
TABLES = {
    "fields": lambda k: ("field", k[0], k[1]),
    "rets": lambda k: ("ret", k[0]),
    "ret_parts": lambda k: ("ret", k[0]),
    "params": lambda k: ("param", k[0]),
    "ctx": lambda k: ("ctx", k[0]),
    "reach": lambda k: ("reach", k[0]),
    "reach_when": lambda k: ("reach", k[0]),
}


class Recorder:
    """The reads of each step: function key -> entries, and where each was first read."""

    def __init__(self, trace: int):
        self.stepping = None  # the key of the function being stepped (None: no step runs)
        self.trace = trace
        self.read = collections.defaultdict(set)
        self.where: dict = {}

    def note(self, entry) -> None:
        key = self.stepping
        if key is None:
            return
        got = self.read[key]
        if entry not in got:
            got.add(entry)
            if self.trace:
                frames = traceback.extract_stack(limit=self.trace + 2)[:-2]
                self.where[(key, entry)] = " < ".join(f"{f.name}:{f.lineno}" for f in reversed(frames))


def _watched_table(recorder: Recorder, entry_of):
    class WatchedTable(dict):
        """One of the fixpoint's tables, noting the entries read while a step runs."""

        def get(self, k, default=None):
            recorder.note(entry_of(k))
            return dict.get(self, k, default)

        def __getitem__(self, k):
            recorder.note(entry_of(k))
            return dict.__getitem__(self, k)

        def __contains__(self, k):
            recorder.note(entry_of(k))
            return dict.__contains__(self, k)

    return WatchedTable


def install(recorder: Recorder, report):
    """Wrap ``Program.solve`` and ``Program._step`` and the lazy fill of split returns; returns what
    puts them back."""
    from cslint.analysis import program as program_module
    from cslint.analysis import reads as reads_module

    solve, step = program_module.Program.solve, program_module.Program._step
    returned_part = reads_module.ProgramReads._returned_part

    def watched_solve(self):
        for name, entry_of in TABLES.items():
            setattr(self, name, _watched_table(recorder, entry_of)(getattr(self, name)))
        try:
            solve(self)
        finally:
            for name in TABLES:
                setattr(self, name, dict(getattr(self, name)))
        report(self)

    def watched_step(self, fn, v, mode):
        recorder.stepping = fn.key
        try:
            return step(self, fn, v, mode)
        finally:
            recorder.stepping = None

    def unwatched_fill(self, fn, mode, index):
        if (fn.key, mode) in self.split_returns:
            return returned_part(self, fn, mode, index)
        saved, recorder.stepping = recorder.stepping, None  # the fill reads fn's own tables: fn's return covers them
        try:
            return returned_part(self, fn, mode, index)
        finally:
            recorder.stepping = saved

    program_module.Program.solve = watched_solve
    program_module.Program._step = watched_step
    reads_module.ProgramReads._returned_part = unwatched_fill

    def uninstall() -> None:
        program_module.Program.solve, program_module.Program._step = solve, step
        reads_module.ProgramReads._returned_part = returned_part

    return uninstall


def missing_reads(program, recorder: Recorder, read_list=None) -> list:
    """(function, the entries its step read that its read list lacks), in a stable order;
    ``read_list(program, fn)``: the list checked (default :func:`~cslint.analysis.stepreads.table_reads`)."""
    from cslint.analysis.callercontext import reads_no_context
    from cslint.analysis.stepreads import stepped, table_reads

    read_list = read_list or table_reads
    functions = {fn.key: fn for fn in stepped(program)}
    out = []
    for key, got in recorder.read.items():
        fn = functions.get(key)
        if fn is None:
            continue
        known = read_list(program, fn)
        missed = {entry for entry in got - known
                  if not (entry[0] == "param" and entry[1] != key)
                  and not (entry[0] in ("ret", "reach") and entry[1] == key)
                  and not (entry[0] == "ctx" and entry[1] == key and reads_no_context(fn))}
        if missed:
            out.append((fn, sorted(missed, key=repr)))
    out.sort(key=lambda item: (item[0].path, item[0].qualname))
    return out


def check_tree(targets: list, config=None, trace: int = 0, read_list=None) -> tuple:
    """Lint ``targets`` once with the reads watched: (entries read in all, :func:`missing_reads`, the
    recorder), of the last fixpoint the run solved."""
    from cslint.cli import main as cslint_main

    recorder = Recorder(trace)
    result = [0, []]

    def report(program) -> None:
        result[0] = sum(len(got) for got in recorder.read.values())
        result[1] = missing_reads(program, recorder, read_list)

    uninstall = install(recorder, report)
    argv = ["cslint", "check", "--no-cache", "--jobs", "1", "--format", "json", "--exit-zero", "-o", os.devnull]
    if config:
        argv += ["--config", config]
    saved = sys.argv
    sys.argv = argv + list(targets)
    try:
        cslint_main()
    except SystemExit:
        pass
    finally:
        sys.argv = saved
        uninstall()
    return result[0], result[1], recorder


def print_report(tree: str, reads: int, found: list, recorder: Recorder) -> None:
    entries = sum(len(missed) for _fn, missed in found)
    print(f"{tree}: {len(recorder.read):,} functions stepped, {reads:,} entries read; {len(found)} functions read "
          f"{entries} entries missing from their read lists")
    for fn, missed in found:
        print(f"  {fn.path}: {fn.qualname}")
        for entry in missed:
            print(f"    {entry!r}")
            if (fn.key, entry) in recorder.where:
                print(f"      read at {recorder.where[(fn.key, entry)]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="*", default=["vllm"], help="directories or pinned tree names (default: vllm)")
    parser.add_argument("--config", help="settings file (default: bench/realtree.py's for a pinned tree, else none)")
    parser.add_argument("--trace", type=int, default=6, help="frames shown of the first read of each entry missed (0: none)")
    args = parser.parse_args(argv)
    sys.path.insert(0, HERE)
    from realtree import DATA, DEFAULT_CONFIG, TREES, pinned  # noqa: E402

    missed = 0
    for name in args.trees:
        config = args.config
        tree = os.path.abspath(name)
        targets = [tree]
        known = next((t for t in TREES if t.name == name), None)
        if known is not None:
            tree = pinned(name) or parser.error(f"the pinned tree {name} cannot be had")
            targets = [os.path.join(tree, part) for part in known.parts if os.path.exists(os.path.join(tree, part))] \
                or [tree]
            config = config or str(DATA / (known.config or DEFAULT_CONFIG.name))
        reads, found, recorder = check_tree(targets, config, args.trace)
        print_report(tree, reads, found, recorder)
        missed += len(found)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
