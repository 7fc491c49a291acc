"""The report is the same bytes whatever the hash seed and ``--jobs``.

The whole-tree analysis keeps a bounded number of explanations per value and
the first flow it sees for each; if any choice followed a set's iteration
order (which follows ``PYTHONHASHSEED``, and differs for a set unpickled from
a worker), the cited source, its chain and even the root-cause counts would
change from run to run.  The generated tree below gives every such choice
more candidates than the cap keeps: conditions over seven rank-local values,
a field assigned from seven sources in seven methods, a wrapper that seven
modules call with different rank-local arguments, a function that returns
one of several sources.  It has more files than the in-process threshold, so
``--jobs 2`` really parses in worker processes.

``bench/determinism.py`` runs the same comparison on real trees.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from cslint.engine import workers

SOURCES = (
    "dist.get_rank()",
    'int(os.environ["LOCAL_RANK"])',
    "socket.gethostname()",
    "os.getpid()",
    'int(os.environ["RANK"])',
    "dist.get_rank() % 2",
    'os.environ.get("SLURM_PROCID")',
)


def write_tree(root, modules: int = workers.PARALLEL_THRESHOLD + 6) -> None:
    """A package whose analysis has more candidate explanations than it keeps."""
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    methods = "\n".join(
        f"    def set_{index}(self):\n        self.active = {source}\n" for index, source in enumerate(SOURCES))
    (pkg / "state.py").write_text(textwrap.dedent("""\
        import os
        import socket

        import torch.distributed as dist


        class State:
            def __init__(self):
                self.active = None

        """) + methods + textwrap.dedent("""\

            def drain(self, tensor):
                if not self.active:
                    return None
                dist.all_reduce(tensor)
                return tensor


        def sync_when(flag, tensor):
            if flag:
                dist.all_reduce(tensor)


        def pick(kind):
            if kind == 0:
                return dist.get_rank()
            if kind == 1:
                return os.getpid()
            if kind == 2:
                return socket.gethostname()
            return int(os.environ["RANK"])
        """))
    names = [f"v{index}" for index in range(len(SOURCES))]
    assignments = "\n".join(f"    {name} = {source}" for name, source in zip(names, SOURCES))
    for index in range(modules):
        source = SOURCES[index % len(SOURCES)]
        (pkg / f"m{index:02d}.py").write_text(textwrap.dedent(f"""\
            import os
            import socket

            import torch.distributed as dist

            from pkg.state import pick, sync_when


            def step_{index}(tensor):
            """) + assignments + textwrap.dedent(f"""
                if {" + ".join(names[:4])} or {" or ".join(names[4:])}:
                    dist.all_reduce(tensor)
                sync_when({source}, tensor)
                if pick({index % 4}):
                    dist.broadcast(tensor, 0)
            """))


def _run(tree, seed: int, jobs: int, fmt: str) -> bytes:
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    done = subprocess.run(
        [sys.executable, "-m", "cslint", "check", "--no-cache", "--format", fmt, "--jobs", str(jobs), "pkg"],
        cwd=tree, env=env, capture_output=True, timeout=300,
    )
    assert done.returncode == 1, done.stderr.decode()
    return done.stdout


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_output_is_identical_for_any_hash_seed_and_jobs(tmp_path, fmt):
    write_tree(tmp_path)
    outputs = {(seed, jobs): _run(tmp_path, seed, jobs, fmt) for seed, jobs in ((0, 1), (1, 2), (2, 2), (3, 1))}
    first = outputs[(0, 1)]
    assert b"CSL10" in first
    for key, output in outputs.items():
        assert output == first, f"seed/jobs {key} differs from seed 0, --jobs 1"


ORDER_PROBE = textwrap.dedent("""\
    from cslint.analysis.atoms import call_result, collective_result, field_read, param, source
    from cslint.analysis.callrefs import name_ref
    from cslint.analysis.divergence import canonical_order

    inner_a = frozenset({source("rank id", "a", "f.py", 1, (("*", frozenset({"tp", "pp"})),))})
    inner_b = frozenset({source("rank id", "b", "f.py", 1, (("*", frozenset({"dp"})),))})
    atoms = [
        call_result(name_ref("f"), (inner_a,), (), frozenset(), "f.py", 3, "f", 2),
        call_result(name_ref("f"), (inner_b,), (), frozenset(), "f.py", 3, "f", 2),
        collective_result("world", inner_a, 2),
        collective_result("world", inner_b, 2),
        source("rank id", "r", "f.py", 2, (("*", frozenset({"tp"})),)),
        source("rank id", "r", "f.py", 2, (("*", frozenset({"pp"})),)),
        param(0),
        field_read("m:C", "x"),
    ]
    orders = {tuple(atoms.index(a) for a in canonical_order(built))
              for built in (frozenset(atoms), frozenset(reversed(atoms)), set(atoms[::2] + atoms[1::2]))}
    assert len(orders) == 1, orders
    print(orders.pop())
    """)


def test_canonical_order_follows_neither_the_hash_seed_nor_the_set():
    """Atoms that differ only inside nested sets (the same call on one line
    with other arguments, collectives over one group, one source with other
    dimensions) are ordered by their structure."""
    printed = set()
    for seed in range(4):
        done = subprocess.run([sys.executable, "-c", ORDER_PROBE], env=dict(os.environ, PYTHONHASHSEED=str(seed)),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        printed.add(done.stdout)
    assert len(printed) == 1, printed


def test_output_is_identical_wherever_the_tree_lives(tmp_path):
    """The same sources in a directory of another name and depth print the
    same bytes: nothing that orders explanations may read where the tree lies
    (atoms name their files by absolute path; ties among them are ordered by
    a digest that reads a file's path below its import root)."""
    here = tmp_path / "a"
    there = tmp_path / "somewhere" / "else" / "entirely"
    here.mkdir()
    there.mkdir(parents=True)
    write_tree(here)
    write_tree(there)
    first = _run(here, 0, 1, "json")
    assert b"CSL10" in first
    assert _run(there, 0, 1, "json") == first
