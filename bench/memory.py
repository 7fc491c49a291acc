"""Peak memory of `cslint check` on one big file, per MB of source.

Generates Python files of a few shapes and sizes, then measures, each in a
fresh process and in the same run:

* the baseline: read the file and ``ast.parse`` it (the parser alone holds
  its C arena and the Python tree at once, so this is most of the bill);
* ``cslint check --no-cache FILE`` with ``max-file-size`` raised above the
  file (default 4 MiB).

and prints peak resident memory per MB of source for both, and cslint's
excess over the baseline.  Shapes:

* ``functions``: many small functions, each a rank-local branch around a
  collective (a finding per function);
* ``module``: module-level code, thousands of imports, definitions and
  module-level ``if`` blocks around collectives: one dataflow over a CFG
  with thousands of nodes and thousands of variables (what took 1.6 GB for
  4 MB, now bounded by sharing environments, see
  ``cslint/analysis/environment.py``);
* ``classes``: classes whose fields are set under rank-local conditions and
  read before collectives in other methods;
* ``real``: modules of a real tree concatenated (``--from-tree``, default
  vLLM's pinned tree of bench/realtree.py): the density of real code.

The generated shapes carry docstrings and comments as real code does; their
statements are still denser than real code's, so the parser alone takes more
per MB there.

Goal: under 100 MB per MB of source.

    .venv/bin/python bench/memory.py [--sizes 1 4 20] [--shapes functions module classes]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
from realtree import pinned  # noqa: E402  (run as python bench/NAME.py: bench/ is first on sys.path)


LAUNCH = "import sys; sys.path[0] = sys.argv.pop(1); from cslint.cli import console_main; console_main()"
PARSE = "import ast, sys; ast.parse(open(sys.argv[1], 'rb').read())"
GOAL_MB_PER_MB = 100


def _functions(i: int) -> str:
    return f'''
def step_{i}(tensor, items):
    """Add up the sizes of the ready items and share the total.

    Only one rank in seven counts anything, so the reduction below runs on
    some ranks and not on others.
    """
    # the rank decides which items this process owns
    rank = dist.get_rank()
    total = 0
    for item in items:
        if item.ready and rank == {i % 7}:
            total += item.size
    if total > {i}:
        dist.all_reduce(tensor)
    return total
'''


def _module(i: int) -> str:
    return f'''import module_{i} as alias_{i}
from package_{i % 50} import name_{i}


def helper_{i}(value):
    """Offset ``value`` by this block's number."""
    return value + {i}


class Holder{i}:
    """A constant of block {i}."""

    size = {i}


# block {i}: every rank reads the same setting, so the barrier is safe
setting_{i} = os.environ.get("SETTING_{i}", "{i}")
if setting_{i} == "{i}":
    dist.barrier()
'''


def _classes(i: int) -> str:
    return f'''

class Worker{i}:
    """Drains the requests of one group.

    ``pending`` is filled on one rank only: the early return in ``drain``
    skips the reduction there.
    """

    def __init__(self, group):
        self.group = group
        self.pending = []
        if dist.get_rank() == {i % 3}:
            self.pending.append({i})

    def drain(self, tensor):
        if not self.pending:
            return None
        dist.all_reduce(tensor, group=self.group)
        return [t for t in self.pending if t > {i}]
'''


SHAPES = {"functions": _functions, "module": _module, "classes": _classes}
#: Real sources concatenated (``--from-tree``, default vLLM's when present): the density of real code.
REAL_TREE = "vllm"  # a pinned tree of bench/realtree.py, or a directory


def concatenated(directory: str, tree: str, megabytes: float) -> str:
    """Modules of a real tree, one after another, up to ``megabytes`` (each
    kept only if it parses alone; ``from __future__`` lines dropped, since
    they must open a module)."""
    import ast

    target = int(megabytes * (1 << 20))
    parts, size = [], 0
    for folder, dirs, files in os.walk(tree):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".py") or size >= target:
                continue
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                text = "\n".join(line for line in handle.read().split("\n")
                                 if not line.startswith("from __future__"))
            try:
                ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            parts.append(text + "\n")
            size += len(text) + 1
    path = os.path.join(directory, f"{os.path.basename(tree.rstrip('/'))}_{megabytes:g}mb.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(parts))
    return path
HEADER = "import os\n\nimport torch.distributed as dist\n"


def generate(directory: str, shape: str, megabytes: float) -> str:
    target = int(megabytes * (1 << 20))
    parts, size, index = [HEADER], len(HEADER), 0
    make = SHAPES[shape]
    while size < target:
        chunk = make(index)
        parts.append(chunk)
        size += len(chunk)
        index += 1
    path = os.path.join(directory, f"{shape}_{megabytes:g}mb.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(parts))
    return path


def peak_rss(command: list, cwd: str) -> tuple:
    """(peak resident MB, seconds, exit status) of a child process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    process.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{command[-1]} exited {code}:\n{stderr[-2000:]}")
    return usage.ru_maxrss / 1024, elapsed, code  # ru_maxrss is in KiB on Linux


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 4], help="MB of source per file")
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES) + ["real"],
                        default=sorted(SHAPES) + ["real"])
    parser.add_argument("--from-tree", default=REAL_TREE, help="the tree the `real` shape concatenates")
    args = parser.parse_args(argv)
    if "real" in args.shapes and not os.path.isdir(args.from_tree):
        args.from_tree = pinned(args.from_tree) or args.from_tree
    if "real" in args.shapes and not os.path.isdir(args.from_tree):
        print(f"{args.from_tree} not found: the `real` shape is left out", file=sys.stderr)
        args.shapes = [shape for shape in args.shapes if shape != "real"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="cslint-memory-") as work:
        with open(os.path.join(work, "pyproject.toml"), "w", encoding="utf-8") as handle:
            handle.write(f"[tool.cslint]\nmax-file-size = {int(max(args.sizes) * 2 * (1 << 20))}\n")
        for shape in args.shapes:
            for megabytes in args.sizes:
                path = concatenated(work, args.from_tree, megabytes) if shape == "real" \
                    else generate(work, shape, megabytes)
                real_mb = os.path.getsize(path) / (1 << 20)
                parse_mb, parse_s, _ = peak_rss([sys.executable, "-c", PARSE, path], work)
                lint_mb, lint_s, code = peak_rss([sys.executable, "-c", LAUNCH, ROOT, "check", "--no-cache", "-q",
                                                  os.path.basename(path)], work)
                rows.append((shape, real_mb, parse_mb, parse_s, lint_mb, lint_s, code))
                os.unlink(path)
    header = ("shape", "source", "read+parse peak", "per MB", "cslint peak", "per MB", "excess per MB",
              "cslint time", "goal")
    table = [header]
    for shape, real_mb, parse_mb, parse_s, lint_mb, lint_s, code in rows:
        per_mb = lint_mb / real_mb
        table.append((shape, f"{real_mb:.1f} MB", f"{parse_mb:.0f} MB", f"{parse_mb / real_mb:.0f}",
                      f"{lint_mb:.0f} MB", f"{per_mb:.0f}", f"{(lint_mb - parse_mb) / real_mb:.0f}",
                      f"{lint_s:.1f} s",
                      "OK" if per_mb < GOAL_MB_PER_MB else "OVER"))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
    print(f"goal: cslint peak under {GOAL_MB_PER_MB} MB per MB of source; the baseline is one read + ast.parse "
          "of the same file in a fresh process")
    return 0 if all(lint_mb / real_mb < GOAL_MB_PER_MB for _s, real_mb, _p, _ps, lint_mb, _ls, _c in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
