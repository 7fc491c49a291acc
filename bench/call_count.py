"""How many Python function calls does one version of cslint make next to another, on the same tree?

Each version (a directory holding a checkout, or a git revision exported with
``git archive``) runs ``cslint check --no-cache --jobs 1 --format json TREE``
once in a fresh process under cProfile, with ``PYTHONHASHSEED=0``.  The count
is deterministic, so it compares two commits on a busy machine where
``bench/commit_speed.py``'s timings cannot; it is not CPU time (a call of a
builtin costs less than a call of a Python function) and it misses what
``--jobs 2`` adds (pipe round trips, work done twice in two processes), so a
step that changes processes or scheduling is judged by ``commit_speed.py`` on
a quiet machine.

Every profiler entry counts by its code object (``Profile.getstats``), not by
the ``(file, line, name)`` label ``pstats`` keys its table with: functions that
share a label, such as the ``__new__`` every ``NamedTuple`` class generates
(``<string>:1 <lambda>``), would otherwise overwrite each other and make the
total depend on how classes are laid out in modules.

    .venv/bin/python bench/call_count.py --old 250a9b1 --new .
    .venv/bin/python bench/call_count.py --new . --top 40      # one version, its 40 most-called
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from commit_speed import checkout  # noqa: E402  (run as python bench/NAME.py: bench/ is first on sys.path)
from realtree import pinned  # noqa: E402

#: runs in the measured checkout: profiles one whole `cslint check` and prints
#: {"total": calls, "functions": {label: calls}} as JSON on the last line
_PROFILED_RUN = r'''
import collections, cProfile, json, sys
from cslint.cli import main
sys.argv = ["cslint", "check", "--no-cache", "--jobs", "1", "--format", "json", "-o", OUTPUT, TREE]
profile = cProfile.Profile()
profile.enable()
try:
    main()
except SystemExit:
    pass
profile.disable()
functions = collections.Counter()
for entry in profile.getstats():
    code = entry.code
    label = code if isinstance(code, str) else f"{'/'.join(code.co_filename.split('/')[-2:])}:{code.co_firstlineno} {code.co_name}"
    functions[label] += entry.callcount
print(json.dumps({"total": sum(functions.values()), "functions": functions}))
'''


def count_calls(directory: str, tree: str, python: str) -> dict:
    code = _PROFILED_RUN.replace("OUTPUT", repr(os.devnull)).replace("TREE", repr(tree))
    env = dict(os.environ, PYTHONPATH=directory, PYTHONHASHSEED="0")
    done = subprocess.run([python, "-c", code], env=env, cwd=directory, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise SystemExit(f"profiled run in {directory} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(lines[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", default=None, help="default: the pinned vLLM tree of bench/realtree.py")
    parser.add_argument("--old", help="the version to compare against (omit to count one version)")
    parser.add_argument("--new", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--top", type=int, default=15, help="functions listed (largest changes, or most calls)")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    args.tree = os.path.abspath(args.tree or pinned("vllm") or parser.error("the pinned vLLM tree cannot be had; pass a tree"))
    with checkout(args.new) as new_dir:
        new = count_calls(new_dir, args.tree, args.python)
    print(f"tree: {args.tree}  (--jobs 1, PYTHONHASHSEED=0, calls counted per code object)")
    if args.old is None:
        print(f"{'version':<28} {'calls':>14}")
        print(f"{('new ' + args.new)[:28]:<28} {new['total']:>14,}")
        print(f"\n{'calls':>12}  function")
        for label, calls in sorted(new["functions"].items(), key=lambda item: (-item[1], item[0]))[:args.top]:
            print(f"{calls:>12,}  {label}")
        return 0
    with checkout(args.old) as old_dir:
        old = count_calls(old_dir, args.tree, args.python)
    print(f"{'version':<28} {'calls':>14}")
    for label, result in ((f"old {args.old}", old), (f"new {args.new}", new)):
        print(f"{label[:28]:<28} {result['total']:>14,}")
    print(f"new/old calls: {new['total'] / old['total']:.4f} ({new['total'] - old['total']:+,})")
    labels = set(old["functions"]) | set(new["functions"])
    deltas = sorted(((new["functions"].get(label, 0) - old["functions"].get(label, 0), label) for label in labels),
                    key=lambda item: (-abs(item[0]), item[1]))
    print(f"\n{'old':>12} {'new':>12} {'change':>10}  function (largest changes; a label names file:line, which moves with edits)")
    for delta, label in deltas[:args.top]:
        if delta:
            print(f"{old['functions'].get(label, 0):>12,} {new['functions'].get(label, 0):>12,} {delta:>+10,}  {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
