"""Does the cache ever change what `cslint check` prints?

For each tree, with one cache directory shared by every run (a ``--config``
file beside it, whose directory is the project root):

1. ``--no-cache`` on the tree (the reference);
2. the tree, cache on (fills it), then again (the whole-run cache answers);
3. a sub-path of the tree, cache on, against ``--no-cache`` on the same;
4. the tree spelled relative to its parent, from there (another working
   directory), cache on, against ``--no-cache`` on the same;
5. ``.`` from inside the tree, cache on, against ``--no-cache`` on the same.

Each warm report must be byte-identical to its ``--no-cache`` run, and every
report of the whole tree, its paths resolved, identical to the reference.

    .venv/bin/python bench/cache_consistency.py [TREE[:SUBPATH] ...]

Default trees: vLLM, pinned by bench/realtree.py (sub-path vllm/distributed), the installed
torch (sub-path distributed) and a generated tree of 80 modules.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
from realtree import pinned  # noqa: E402  (run as python bench/NAME.py: bench/ is first on sys.path)


LAUNCH = "import sys; sys.path[0] = sys.argv.pop(1); from cslint.cli import console_main; console_main()"
# the trees' own .gitignore rules (torch lies in a virtual environment) do not decide what is checked
CONFIG = "[tool.cslint]\nrespect-gitignore = false\n"


def default_trees(scratch: str) -> list:
    trees = []
    vllm = pinned("vllm")
    if vllm is not None:
        trees.append((vllm, "vllm/distributed"))
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.submodule_search_locations:
        trees.append((list(spec.submodule_search_locations)[0], "distributed"))
    trees.append((generated_tree(os.path.join(scratch, "generated")), "pkg/sub"))
    return trees


def generated_tree(root: str, modules: int = 80) -> str:
    """A package with wrappers across files, fields set under rank-local
    conditions, early exits and a sub-package that calls into its parent."""
    sub = os.path.join(root, "pkg", "sub")
    os.makedirs(sub)
    for directory in (os.path.join(root, "pkg"), sub):
        open(os.path.join(directory, "__init__.py"), "w").close()
    with open(os.path.join(root, "pkg", "helpers.py"), "w") as handle:
        handle.write(textwrap.dedent("""\
            import torch.distributed as dist


            def sync_counts(tensor):
                dist.all_reduce(tensor)
                return tensor


            class Worker:
                def __init__(self):
                    self.pending = []
                    if dist.get_rank() == 0:
                        self.pending.append(1)

                def drain(self, tensor):
                    if not self.pending:
                        return None
                    dist.barrier()
                    return tensor
            """))
    for index in range(modules):
        directory = sub if index % 3 == 0 else os.path.join(root, "pkg")
        with open(os.path.join(directory, f"m{index:02d}.py"), "w") as handle:
            handle.write(textwrap.dedent(f"""\
                import os

                import torch.distributed as dist

                from pkg.helpers import Worker, sync_counts


                def step_{index}(tensor):
                    if int(os.environ.get("LOCAL_RANK", "0")) == {index % 4}:
                        return None
                    sync_counts(tensor)
                    dist.broadcast(tensor, 0)
                    if dist.get_rank() > {index % 3}:
                        Worker().drain(tensor)
                    return tensor
                """))
    return root


def run(cwd: str, config: str, *args: str) -> bytes:
    # LAUNCH puts the checkout on sys.path itself; a relative PYTHONPATH would name the tree (see determinism.py)
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", LAUNCH, ROOT, "check", "--config", config, "--output-format", "json",
                           *args], cwd=cwd, env=env, capture_output=True, timeout=1800)
    if done.returncode not in (0, 1):
        raise SystemExit(f"cslint {' '.join(args)} in {cwd} exited {done.returncode}:\n"
                         f"{done.stderr.decode(errors='replace')[-2000:]}")
    return done.stdout


def resolved(report: bytes, cwd: str) -> list:
    """The findings with every path resolved (the same analysis, however spelled)."""
    findings = json.loads(report)["findings"]
    for finding in findings:
        finding["path"] = os.path.realpath(os.path.join(cwd, finding["path"]))
        for link in finding["chain"]:
            link["path"] = os.path.realpath(os.path.join(cwd, link["path"]))
    return sorted(findings, key=lambda f: (f["path"], f["line"], f["column"], f["code"], f["message"]))


def check_tree(tree: str, sub: str, scratch: str) -> list:
    """(step, findings, verdict) rows for one tree."""
    work = tempfile.mkdtemp(prefix="run-", dir=scratch)
    config = os.path.join(work, "pyproject.toml")
    with open(config, "w") as handle:
        handle.write(CONFIG)
    tree = os.path.abspath(tree)
    parent, name = os.path.split(tree)
    rows = []
    reference = run(work, config, "--no-cache", tree)
    resolved_reference = resolved(reference, work)
    rows.append(("--no-cache TREE", len(resolved_reference), "reference"))
    for step in ("TREE (fills the cache)", "TREE again (whole-run cache)"):
        report = run(work, config, tree)
        rows.append((step, len(json.loads(report)["findings"]), "identical" if report == reference else "DIFFERS"))
    for label, cwd, target in ((f"sub-path {sub}", work, os.path.join(tree, sub)),
                               (f"{name} from its parent", parent, name),
                               (". from inside the tree", tree, ".")):
        warm = run(cwd, config, target)
        cold = run(cwd, config, "--no-cache", target)
        verdict = "identical" if warm == cold else "DIFFERS from --no-cache"
        if target != os.path.join(tree, sub) and resolved(warm, cwd) != resolved_reference:
            verdict += ", DIFFERS from the reference"
        rows.append((label, len(json.loads(warm)["findings"]), verdict))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*", metavar="TREE[:SUBPATH]")
    args = parser.parse_args(argv)
    failed = False
    with tempfile.TemporaryDirectory(prefix="cslint-cache-bench-") as scratch:
        trees = [(t.split(":", 1)[0], t.split(":", 1)[1] if ":" in t else ".") for t in args.trees] \
            or default_trees(scratch)
        for tree, sub in trees:
            start = time.perf_counter()
            rows = check_tree(tree, sub, scratch)
            print(f"{tree} ({time.perf_counter() - start:.0f} s)")
            width = max(len(step) for step, _n, _v in rows)
            for step, count, verdict in rows:
                print(f"  {step:<{width}}  {count:>5} findings  {verdict}")
                failed |= "DIFFERS" in verdict
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
