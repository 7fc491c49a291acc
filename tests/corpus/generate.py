"""Seeded generator of small mpi4py SPMD programs for cslint's accuracy corpus.

Every program has random structure (nested ifs and loops, helper functions,
a small class, early exits, try/except, short-circuits) whose conditions come
either from rank-local sources (the rank, a per-rank list length, a parity
flag, a wall-clock measurement, the result of a rooted gather) or from uniform
ones (the world size, module constants, results of allreduce / allgather /
bcast).  About 45 % of the programs get one *hazard* (the kinds in turn): a collective whose
execution depends on a rank-local condition.  The generator marks the line it
expects a finding on with ``# expect: CSL10x``; the program-level ground truth
does not come from these markers but from running the program on 2 and 3
ranks (see ``label.py``).

Each program records every collective it is about to enter
(``note("kind:site")``, one site per collective line) and prints one
``TRACE`` line per rank at the end, so a run in which ranks completed
*different* collective sequences is detected as well as a hang: MPI may pair
a ``bcast`` with an ``allreduce`` and return garbage, or pair two
``allreduce`` calls from different lines and mix unrelated values.
Collectives that are designed to pair up across lines (the two branches of
an if that both reduce, the "others wait, then the first rank releases them"
barriers) share one site.

Conditions that the generator calls rank-local are chosen so that they really
differ between ranks for 2 and for 3 processes, and rank-local conditions are
never nested inside each other, so a placed hazard is live on at least one of
the two rank counts.  Uniform conditions guarding code are satisfiable on at
least one of the two counts.

Usage: ``python tests/corpus/generate.py [--seed N] [--count N] [--out DIR]``
writes ``prog_NNN.py`` files (``label.py`` runs them and writes the manifest).
"""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_SEED = 20261202
DEFAULT_COUNT = 180
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "generated"

HEADER = '''"""SPMD program {index:03d} of the cslint accuracy corpus (seed {seed}, {intent}).

Run with ``mpiexec -n 2 python {name}``; every rank prints one TRACE line.
"""

import os
import sys
import time

from mpi4py import MPI

TRACE = []
LIMIT = 3


def note(kind):
    """Record the collective about to run; true, so it can sit inside `and` chains."""
    TRACE.append(kind)
    return True
'''

FOOTER = '''


if __name__ == "__main__":
    main()
    sys.exit(0)
'''

# -- condition and bound vocabularies ---------------------------------------------
# Each entry: (expression text, prelude variables it needs).  Rank-local
# expressions differ between ranks for 2 and for 3 processes.
DIVERGENT_CONDITIONS = [
    ("rank == 0", ()),
    ("rank % 2 == 1", ()),
    ("rank > 0", ()),
    ("rank == size - 1", ()),
    ("items", ("items",)),
    ("not items", ("items",)),
    ("len(items) > 0", ("items",)),
    ("flag", ("flag",)),
    ("not flag", ("flag",)),
    ("slow", ("slow",)),
    ("len(pending) > 1", ("pending",)),
    ("gathered is not None", ("gathered",)),
]
# Uniform conditions that hold on every run (no else branch: it would be dead).
UNIFORM_TRUE_CONDITIONS = [
    ("size > 1", ()),
    ("LIMIT > 2", ()),
    ("total > 0", ("total",)),
    ("any_flag", ("any_flag",)),
    ("max(lengths) > 0", ("lengths",)),
    ("root_len == 0", ("root_len",)),
]
# Uniform conditions that differ between the 2- and the 3-rank run.
UNIFORM_SPLIT_CONDITIONS = [
    ("size == 2", ()),
    ("size == 3", ()),
    ("size % 2 == 1", ()),
]
DIVERGENT_BOUNDS = [
    ("range(len(items))", ("items",)),
    ("range(rank + 1)", ()),
    ("items", ("items",)),
    ("pending", ("pending",)),
]
UNIFORM_BOUNDS = [
    ("range(LIMIT)", ()),
    ("range(size)", ()),
    ("range(total)", ("total",)),
    ("range(2)", ()),
]
LOCAL_VALUES = [
    ("len(items)", ("items",)),
    ("rank", ()),
    ("int(flag)", ("flag",)),
    ("len(pending)", ("pending",)),
    ("rank * 2 + 1", ()),
]

# Prelude statements, in dependency order.  Collectives here run on every rank.
PRELUDE = {
    "items": ["items = list(range(rank % 3))"],
    "flag": ["flag = rank % 2 == 0"],
    "pending": ['pending = {f"req{i}": i for i in range(rank + 1)}'],
    "slow": [
        "t0 = time.monotonic()",
        "if rank == 0:",
        "    time.sleep(0.15)",
        "slow = time.monotonic() - t0 > 0.1",
    ],
    "gathered": ['note("gather")', "gathered = comm.gather(rank, root=0)"],
    "total": ['note("allreduce")', "total = comm.allreduce(len(items))"],
    "any_flag": ['note("allreduce")', "any_flag = comm.allreduce(int(flag), op=MPI.MAX)"],
    "lengths": ['note("allgather")', "lengths = comm.allgather(len(items))"],
    "root_len": ['note("bcast")', "root_len = comm.bcast(len(items), root=0)"],
}
PRELUDE_DEPS = {"total": ("items",), "any_flag": ("flag",), "lengths": ("items",), "root_len": ("items",)}
PRELUDE_ORDER = ["items", "flag", "pending", "slow", "gathered", "total", "any_flag", "lengths", "root_len"]

RARE_IDIOMS = {"staggered_barrier"}
RARE_IDIOM_WEIGHT = 0.3

HAZARD_KINDS = [
    "branch", "branch_else_mismatch", "early_return_helper", "loop_bound", "loop_exit",
    "exception", "short_circuit", "helper_under_branch", "param_flag", "rooted_result",
    "returned_predicate", "local_while", "main_early_return", "field", "ternary",
    "deep_wrapper", "assert_exit", "subcomm_leader", "tuple_return", "helper_raise",
    "sys_exit", "env_rank",
]


@dataclass
class Program:
    """One generated program: its source, the lines the generator expects
    findings on (1-based, with the rule code), and what the generator meant."""

    index: int
    seed: int
    intent: str  # "hazard" or "safe"
    hazard_kind: str
    source: str = ""
    expect: list = field(default_factory=list)  # [(line, code)]

    @property
    def name(self) -> str:
        return f"prog_{self.index:03d}.py"


class Block:
    """Lines of one indented block; markers attach to the line just added."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, str, str]] = []  # (indent, text, expect code)

    def add(self, indent: int, text: str, expect: str = "") -> None:
        self.lines.append((indent, text, expect))

    def extend(self, other: Block, extra_indent: int = 0) -> None:
        for indent, text, expect in other.lines:
            self.lines.append((indent + extra_indent, text, expect))


class ProgramBuilder:
    """Builds one program from a random stream."""

    COLLECTIVES = ("allreduce", "bcast", "barrier", "allgather")

    def __init__(self, rng: random.Random, index: int, seed: int) -> None:
        self.rng = rng
        self.index = index
        self.seed = seed
        self.needed: set[str] = set()
        self.helpers: list[Block] = []
        self.classes: list[Block] = []
        self.helper_count = 0
        self.shared_count = 0

    # -- vocabulary helpers ------------------------------------------------
    def pick(self, table):
        text, needs = self.rng.choice(table)
        self.needed.update(needs)
        return text

    def new_helper_name(self, stem: str) -> str:
        self.helper_count += 1
        return f"{stem}_{self.helper_count}"

    def shared_site(self) -> str:
        """A tag for collectives at different lines that are meant to pair up."""
        self.shared_count += 1
        return f"pair{self.shared_count}"

    def collective(self, block: Block, indent: int, expect: str = "", kind: str = "", value: str = "",
                   shared: str = "") -> None:
        """One collective statement (preceded by its trace note)."""
        kind = kind or self.rng.choice(self.COLLECTIVES)
        value = value or self.pick(LOCAL_VALUES + [("acc", ()), ("1", ())])
        block.add(indent, f'note("{kind}={shared}")' if shared else f'note("{kind}")')
        if kind == "allreduce":
            block.add(indent, f"acc += comm.allreduce({value})", expect)
        elif kind == "bcast":
            block.add(indent, f"acc += comm.bcast({value}, root=0)", expect)
        elif kind == "barrier":
            block.add(indent, "comm.barrier()", expect)
        else:
            block.add(indent, f"acc += sum(comm.allgather({value}))", expect)

    def local_work(self, block: Block, indent: int) -> None:
        choice = self.rng.randrange(4)
        if choice == 0:
            block.add(indent, f"acc += {self.pick(LOCAL_VALUES)}")
        elif choice == 1:
            self.needed.add("items")
            block.add(indent, "acc += sum(items)")
        elif choice == 2:
            block.add(indent, "acc = acc * 2 % 97")
        else:
            block.add(indent, f"acc -= {self.rng.randrange(1, 5)}")

    # -- safe statements ----------------------------------------------------
    def safe_statement(self, block: Block, indent: int, depth: int, in_loop: bool) -> None:
        options = ["collective", "local", "uniform_if", "uniform_for", "divergent_local_if",
                   "balanced_if", "consensus_if", "always_enter", "p2p", "safe_helper",
                   "raise_after_collective", "consensus_while", "divergent_local_loop",
                   "rooted_local_use", "safe_class", "split_member_collective", "staggered_barrier",
                   "root_decides", "uniform_tuple", "size_fallback", "rank_invariant", "guarded_config"]
        if depth >= 2:
            options = ["collective", "local", "divergent_local_if", "balanced_if", "always_enter",
                       "p2p", "rooted_local_use", "safe_helper"]
        # idioms that are rare in real code are drawn less often
        weights = [RARE_IDIOM_WEIGHT if option in RARE_IDIOMS else 1.0 for option in options]
        choice = self.rng.choices(options, weights)[0]
        rng = self.rng
        if choice == "collective":
            self.collective(block, indent)
        elif choice == "local":
            self.local_work(block, indent)
        elif choice == "uniform_if":
            if rng.random() < 0.5:
                block.add(indent, f"if {self.pick(UNIFORM_TRUE_CONDITIONS)}:")
                self.safe_body(block, indent + 1, depth + 1, in_loop)
            else:
                block.add(indent, f"if {self.pick(UNIFORM_SPLIT_CONDITIONS)}:")
                self.safe_body(block, indent + 1, depth + 1, in_loop)
                block.add(indent, "else:")
                self.safe_body(block, indent + 1, depth + 1, in_loop)
        elif choice == "uniform_for":
            var = f"i{depth}"
            block.add(indent, f"for {var} in {self.pick(UNIFORM_BOUNDS)}:")
            self.safe_body(block, indent + 1, depth + 1, True)
        elif choice == "divergent_local_if":
            block.add(indent, f"if {self.pick(DIVERGENT_CONDITIONS)}:")
            self.local_work(block, indent + 1)
            if rng.random() < 0.5:
                block.add(indent, "else:")
                self.local_work(block, indent + 1)
        elif choice == "balanced_if":
            kind = rng.choice(self.COLLECTIVES)
            shared = self.shared_site()
            block.add(indent, f"if {self.pick(DIVERGENT_CONDITIONS)}:")
            self.local_work(block, indent + 1)
            self.collective(block, indent + 1, kind=kind, shared=shared)
            block.add(indent, "else:")
            self.collective(block, indent + 1, kind=kind, shared=shared)
        elif choice == "consensus_if":
            cond = self.pick(DIVERGENT_CONDITIONS)
            name = f"agreed{depth}"
            if rng.random() < 0.5:
                block.add(indent, 'note("allreduce")')
                block.add(indent, f"{name} = comm.allreduce(int(bool({cond})), op=MPI.MAX)")
                block.add(indent, f"if {name}:")
            else:
                block.add(indent, 'note("allgather")')
                block.add(indent, f"{name} = comm.allgather(bool({cond}))")
                block.add(indent, f"if any({name}):")
            self.safe_body(block, indent + 1, depth + 1, in_loop)
        elif choice == "always_enter":
            cond = self.pick(DIVERGENT_CONDITIONS)
            value = self.pick(LOCAL_VALUES)
            block.add(indent, f"payload = {value} if {cond} else 0")
            block.add(indent, 'note("allreduce")')
            block.add(indent, "acc += comm.allreduce(payload)")
        elif choice == "p2p":
            block.add(indent, "if rank == 0:")
            block.add(indent + 1, "comm.send(acc, dest=1, tag=7)")
            block.add(indent, "elif rank == 1:")
            block.add(indent + 1, "acc += comm.recv(source=0, tag=7)")
        elif choice == "safe_helper":
            name = self.safe_helper()
            block.add(indent, f"acc += {name}(comm, {self.pick(LOCAL_VALUES)})")
        elif choice == "raise_after_collective":
            block.add(indent, "try:")
            self.collective(block, indent + 1)
            block.add(indent + 1, f"if {self.pick(DIVERGENT_CONDITIONS)}:")
            block.add(indent + 2, 'raise ValueError("local check failed")')
            block.add(indent + 1, "acc += 1")
            block.add(indent, "except ValueError:")
            block.add(indent + 1, "acc -= 1")
        elif choice == "consensus_while":
            self.needed.add("items")
            block.add(indent, "remaining = len(items)")
            block.add(indent, 'while note("allreduce") and comm.allreduce(remaining) > 0:')
            block.add(indent + 1, "if remaining > 0:")
            block.add(indent + 2, "remaining -= 1")
            block.add(indent + 2, "acc += 1")
        elif choice == "divergent_local_loop":
            block.add(indent, f"for j{depth} in {self.pick(DIVERGENT_BOUNDS)}:")
            self.local_work(block, indent + 1)
        elif choice == "rooted_local_use":
            block.add(indent, 'note("gather")')
            block.add(indent, f"collected = comm.gather({self.pick(LOCAL_VALUES)}, root=0)")
            block.add(indent, "if collected is not None:")
            block.add(indent + 1, "acc += sum(collected)")
        elif choice == "split_member_collective":
            # every member of a colour's sub-communicator passes the colour test
            colour = rng.choice(["rank % 2", "int(rank == 0)", "int(rank > 0)"])
            block.add(indent, f"sub = comm.Split({colour}, rank)")
            block.add(indent, f"if {colour} == {rng.choice([0, 1])}:")
            block.add(indent + 1, rng.choice(["acc += sub.allreduce(acc)", "sub.barrier()",
                                               "acc += sub.bcast(acc, root=0)"]))
        elif choice == "staggered_barrier":
            # the others wait while the first rank prepares; each rank enters one barrier
            shared = self.shared_site()
            block.add(indent, "if rank != 0:")
            block.add(indent + 1, f'note("barrier={shared}")')
            block.add(indent + 1, "comm.barrier()")
            self.local_work(block, indent)
            block.add(indent, "if rank == 0:")
            block.add(indent + 1, f'note("barrier={shared}")')
            block.add(indent + 1, "comm.barrier()")
        elif choice == "root_decides":
            block.add(indent, 'note("gather")')
            block.add(indent, f"votes = comm.gather({self.pick(LOCAL_VALUES)}, root=0)")
            block.add(indent, 'note("bcast")')
            block.add(indent, "go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)")
            block.add(indent, "if go:")
            self.safe_body(block, indent + 1, depth + 1, in_loop)
        elif choice == "uniform_tuple":
            block.add(indent, 'note("allreduce")')
            block.add(indent, f"shared, local = comm.allreduce({self.pick(LOCAL_VALUES)}), {self.pick(LOCAL_VALUES)}")
            block.add(indent, "if shared > 0:")
            self.collective(block, indent + 1)
            block.add(indent, "acc += local")
        elif choice == "size_fallback":
            # a one-rank run cannot diverge, so its local fallback is as good as the gather
            cond = self.pick(DIVERGENT_CONDITIONS)
            block.add(indent, "if size > 1:")
            block.add(indent + 1, 'note("allgather")')
            block.add(indent + 1, f"votes = comm.allgather(bool({cond}))")
            block.add(indent, "else:")
            block.add(indent + 1, f"votes = [bool({cond})]")
            block.add(indent, "if any(votes):")
            self.safe_body(block, indent + 1, depth + 1, in_loop)
        elif choice == "rank_invariant":
            block.add(indent, 'assert 0 <= rank < size, "rank out of range"')
            self.collective(block, indent)
        elif choice == "guarded_config":
            block.add(indent, "try:")
            block.add(indent + 1, "limit = int(LIMIT)")
            block.add(indent, "except (TypeError, ValueError):")
            block.add(indent + 1, "limit = 1")
            block.add(indent, "if limit > 1:")
            self.collective(block, indent + 1)
        elif choice == "safe_class":
            name = self.safe_class()
            block.add(indent, f"acc += {name}(comm, size).step(acc)")
        if in_loop and depth > 0 and rng.random() < 0.1:
            # a uniform early exit from a loop never endangers a collective
            block.add(indent, f"if {self.pick([('size > 5', ()), ('LIMIT < 0', ())])}:")
            block.add(indent + 1, "break")

    def safe_body(self, block: Block, indent: int, depth: int, in_loop: bool) -> None:
        for _ in range(self.rng.randint(1, 2)):
            self.safe_statement(block, indent, depth, in_loop)

    def safe_helper(self) -> str:
        """A helper with collectives that every rank reaches (or leaves together)."""
        name = self.new_helper_name("exchange")
        block = Block()
        block.add(0, f"def {name}(comm, value):")
        block.add(1, f'"""Combine `value` over all ranks ({self.rng.choice(["sum", "max", "echo"])})."""')
        shape = self.rng.randrange(4)
        if shape == 0:
            block.add(1, "if comm.Get_size() == 1:")
            block.add(2, "return value")
            block.add(1, 'note("allreduce")')
            block.add(1, "return comm.allreduce(value)")
        elif shape == 1:
            block.add(1, "payload = value if value > 0 else 0")
            block.add(1, 'note("allreduce")')
            block.add(1, "return comm.allreduce(payload, op=MPI.MAX)")
        elif shape == 2:
            block.add(1, 'note("allgather")')
            block.add(1, "values = comm.allgather(value)")
            block.add(1, "if max(values) > 100:")
            block.add(2, 'note("bcast")')
            block.add(2, "return comm.bcast(value, root=0)")
            block.add(1, "return sum(values)")
        else:
            block.add(1, "rank = comm.Get_rank()")
            block.add(1, "if rank == 0:")
            block.add(2, "value = value + 1")
            block.add(1, 'note("bcast")')
            block.add(1, "return comm.bcast(value, root=0)")
        self.helpers.append(block)
        return name

    def safe_class(self) -> str:
        name = f"Stage{self.new_helper_name('s').split('_')[1]}"
        block = Block()
        block.add(0, f"class {name}:")
        block.add(1, '"""A pipeline step whose collective every rank enters."""')
        block.add(0, "")
        block.add(1, "def __init__(self, comm, world):")
        block.add(2, "self.comm = comm")
        block.add(2, "self.world = world")
        block.add(2, "self.rank = comm.Get_rank()")
        block.add(0, "")
        block.add(1, "def step(self, value):")
        if self.rng.random() < 0.5:
            block.add(2, "if self.world == 1:")
            block.add(3, "return value")
            block.add(2, "if self.rank == 0:")
            block.add(3, "value += 1")
            block.add(2, 'note("allreduce")')
            block.add(2, "return self.comm.allreduce(value)")
        else:
            block.add(2, "local = value if self.rank % 2 == 0 else -value")
            block.add(2, 'note("allgather")')
            block.add(2, "votes = self.comm.allgather(local > 0)")
            block.add(2, "if all(votes):")
            block.add(3, 'note("barrier")')
            block.add(3, "self.comm.barrier()")
            block.add(2, "return len(votes)")
        self.classes.append(block)
        return name

    # -- hazards ------------------------------------------------------------
    def hazard(self, block: Block, indent: int, kind: str, in_loop: bool) -> None:
        rng = self.rng
        if kind == "branch":
            block.add(indent, f"if {self.pick(DIVERGENT_CONDITIONS)}:")
            self.local_work(block, indent + 1)
            self.collective(block, indent + 1, expect="CSL101")
        elif kind == "branch_else_mismatch":
            first, second = rng.sample(["allreduce", "bcast", "barrier", "allgather"], 2)
            block.add(indent, f"if {self.pick(DIVERGENT_CONDITIONS)}:")
            self.collective(block, indent + 1, expect="CSL101", kind=first)
            block.add(indent, "else:")
            self.collective(block, indent + 1, expect="CSL101", kind=second)
        elif kind == "early_return_helper":
            name = self.new_helper_name("sync_pending")
        
            helper = Block()
            helper.add(0, f"def {name}(comm, entries):")
            helper.add(1, '"""Sum the entry counts of all ranks."""')
            helper.add(1, "acc = 0")
            helper.add(1, "if not entries:" if rng.random() < 0.5 else "if len(entries) == 0:")
            helper.add(2, "return 0")
            self.collective(helper, 1, expect="CSL102", value="len(entries)")
            helper.add(1, "return acc")
            self.helpers.append(helper)
            self.needed.add("items")
            block.add(indent, f"acc += {name}(comm, items)")
        elif kind == "loop_bound":
            block.add(indent, f"for key in {self.pick(DIVERGENT_BOUNDS)}:")
            self.collective(block, indent + 1, expect="CSL103")
        elif kind == "loop_exit":
            block.add(indent, f"for step in {self.pick(UNIFORM_BOUNDS)}:")
            block.add(indent + 1, f"if {self.pick(DIVERGENT_CONDITIONS)}:")
            block.add(indent + 2, rng.choice(["break", "continue"]))
            self.collective(block, indent + 1, expect="CSL102")
        elif kind == "exception":
            block.add(indent, "try:")
            block.add(indent + 1, f"if {self.pick(DIVERGENT_CONDITIONS)}:")
            block.add(indent + 2, 'raise ValueError("local input rejected")')
            self.collective(block, indent + 1, expect="CSL104")
            block.add(indent, "except ValueError:")
            block.add(indent + 1, "acc -= 1")
        elif kind == "short_circuit":
            cond = self.pick(DIVERGENT_CONDITIONS)
            op = rng.choice(["and", "or"])
            block.add(indent, f'if ({cond}) {op} (note("allreduce") and comm.allreduce(acc) > 0):', "CSL101")
            block.add(indent + 1, "acc += 1")
        elif kind == "helper_under_branch":
            name = self.safe_helper()
            block.add(indent, f"if {self.pick(DIVERGENT_CONDITIONS)}:")
            block.add(indent + 1, f"acc += {name}(comm, acc)", "CSL101")
        elif kind == "deep_wrapper":
            inner = self.safe_helper()
            name = self.new_helper_name("refresh")
            helper = Block()
            helper.add(0, f"def {name}(comm, value):")
            helper.add(1, '"""Refresh the shared value (wraps a collective helper)."""')
            helper.add(1, f"return {inner}(comm, value) + 1")
            self.helpers.append(helper)
            block.add(indent, f"if {self.pick(DIVERGENT_CONDITIONS)}:")
            block.add(indent + 1, f"acc += {name}(comm, acc)", "CSL101")
        elif kind == "param_flag":
            name = self.new_helper_name("maybe_sync")
            helper = Block()
            helper.add(0, f"def {name}(comm, enabled, value):")
            helper.add(1, '"""Share `value` when enabled."""')
            helper.add(1, "acc = 0")
            helper.add(1, "if enabled:")
            self.collective(helper, 2, expect="CSL101", value="value")
            helper.add(1, "return value + acc")
            self.helpers.append(helper)
            block.add(indent, f"acc = {name}(comm, {self.pick(DIVERGENT_CONDITIONS)}, acc)")
        elif kind == "rooted_result":
            block.add(indent, 'note("gather")')
            block.add(indent, f"collected = comm.gather({self.pick(LOCAL_VALUES)}, root=0)")
            block.add(indent, "if collected:")
            self.collective(block, indent + 1, expect="CSL101")
        elif kind == "returned_predicate":
            name = self.new_helper_name("is_leader")
            helper = Block()
            helper.add(0, f"def {name}(comm):")
            helper.add(1, '"""Whether this process leads."""')
            shape = rng.randrange(3)
            if shape == 0:
                helper.add(1, "return comm.Get_rank() == 0")
            elif shape == 1:
                helper.add(1, "return comm.Get_rank() % 2 == 1")
            else:
                helper.add(1, "rank = comm.Get_rank()")
                helper.add(1, "return rank > 0")
            self.helpers.append(helper)
            block.add(indent, f"if {name}(comm):")
            self.collective(block, indent + 1, expect="CSL101")
        elif kind == "local_while":
            self.needed.add("items")
            block.add(indent, "countdown = len(items)")
            block.add(indent, "while countdown > 0:")
            block.add(indent + 1, "countdown -= 1")
            self.collective(block, indent + 1, expect="CSL103")
        elif kind == "main_early_return":
            block.add(indent, f"if {self.pick(DIVERGENT_CONDITIONS)}:")
            block.add(indent + 1, "return")
            self.collective(block, indent, expect="CSL102")
        elif kind == "assert_exit":
            name = self.new_helper_name("checked_sum")
            helper = Block()
            helper.add(0, f"def {name}(comm, entries):")
            helper.add(1, '"""Sum entry counts; refuses to run without entries."""')
            helper.add(1, "acc = 0")
            helper.add(1, "try:")
            helper.add(2, 'assert entries, "no local entries"')
            self.collective(helper, 2, expect="CSL104", value="len(entries)")
            helper.add(1, "except AssertionError:")
            helper.add(2, "return -1")
            helper.add(1, "return acc")
            self.helpers.append(helper)
            self.needed.add("items")
            block.add(indent, f"acc += {name}(comm, items)")
        elif kind == "field":
            name = f"Worker{self.new_helper_name('w').split('_')[1]}"
            cls = Block()
            cls.add(0, f"class {name}:")
            cls.add(1, '"""Owns this rank\'s queue."""')
            cls.add(0, "")
            cls.add(1, "def __init__(self, comm, queue):")
            cls.add(2, "self.comm = comm")
            cls.add(2, "self.queue = list(queue)")
            cls.add(0, "")
            cls.add(1, "def step(self, value):")
            cls.add(2, "if self.queue:")
            cls.add(3, 'note("allreduce")')
            cls.add(3, "return self.comm.allreduce(value)", "CSL101")
            cls.add(2, "return value")
            self.classes.append(cls)
            self.needed.add("items")
            block.add(indent, f"acc = {name}(comm, items).step(acc)")
        elif kind == "subcomm_leader":
            # colour-0 members differ on `rank == 0` once the colour has two members (3 ranks)
            block.add(indent, "sub = comm.Split(rank % 2, rank)")
            block.add(indent, "if rank == 0:")
            block.add(indent + 1, "sub.barrier()", "CSL101")
        elif kind == "tuple_return":
            name = self.new_helper_name("local_status")
            helper = Block()
            helper.add(0, f"def {name}(comm, entries):")
            helper.add(1, '"""This rank\'s id and backlog."""')
            helper.add(1, "return comm.Get_rank(), len(entries)")
            self.helpers.append(helper)
            self.needed.add("items")
            block.add(indent, f"who, backlog = {name}(comm, items)")
            block.add(indent, f"if {rng.choice(['backlog > 0', 'who == 0', 'backlog == 0'])}:")
            self.collective(block, indent + 1, expect="CSL101")
        elif kind == "helper_raise":
            name = self.new_helper_name("validate")
            helper = Block()
            helper.add(0, f"def {name}(entries):")
            helper.add(1, '"""Reject an empty local backlog."""')
            helper.add(1, "if not entries:")
            helper.add(2, 'raise ValueError("empty backlog")')
            helper.add(1, "return len(entries)")
            self.helpers.append(helper)
            self.needed.add("items")
            block.add(indent, "try:")
            block.add(indent + 1, f"acc += {name}(items)")
            self.collective(block, indent + 1, expect="CSL104")
            block.add(indent, "except ValueError:")
            block.add(indent + 1, "acc -= 1")
        elif kind == "sys_exit":
            block.add(indent, f"if {self.pick(DIVERGENT_CONDITIONS)}:")
            block.add(indent + 1, 'sys.stdout.write(f"TRACE {rank} {\',\'.join(TRACE)}\\n")')
            block.add(indent + 1, "sys.exit(0)")
            self.collective(block, indent, expect="CSL102")
        elif kind == "env_rank":
            # the launcher's rank variable (MPICH's Hydra sets PMI_RANK)
            block.add(indent, 'launch_rank = int(os.environ.get("PMI_RANK", "0"))')
            block.add(indent, f"if launch_rank {rng.choice(['== 0', '> 0', '% 2 == 1'])}:")
            self.collective(block, indent + 1, expect="CSL101")
        elif kind == "ternary":
            cond = self.pick(DIVERGENT_CONDITIONS)
            block.add(indent, f'acc += (note("allreduce") and comm.allreduce(acc)) if {cond} else 0', "CSL101")

    # -- whole program --------------------------------------------------------
    def build(self, kind: str = "") -> Program:
        """The program; `kind` names the hazard to place ("" for a safe program)."""
        rng = self.rng
        intent = "hazard" if kind else "safe"
        body = Block()
        before = rng.randint(0, 2)
        after = rng.randint(0, 2)
        for _ in range(before):
            self.safe_statement(body, 1, 0, False)
        if intent == "hazard":
            # place the hazard at depth 0-2 inside uniform structure
            depth = rng.choice([0, 0, 1, 1, 2]) if kind != "main_early_return" else 0
            indent = 1
            split_used = False  # two split conditions could contradict each other
            for level in range(depth):
                if rng.random() < 0.5:
                    table = UNIFORM_TRUE_CONDITIONS if split_used else UNIFORM_TRUE_CONDITIONS + UNIFORM_SPLIT_CONDITIONS
                    condition = self.pick(table)
                    split_used = split_used or condition.startswith(("size ==", "size %"))
                    body.add(indent, f"if {condition}:")
                else:
                    body.add(indent, f"for u{level} in {self.pick(UNIFORM_BOUNDS)}:")
                indent += 1
            self.hazard(body, indent, kind, in_loop=False)
        else:
            self.safe_statement(body, 1, 0, False)
        for _ in range(after):
            self.safe_statement(body, 1, 0, False)

        # resolve prelude dependencies
        for name, deps in PRELUDE_DEPS.items():
            if name in self.needed:
                self.needed.update(deps)
        main = Block()
        main.add(0, "def main():")
        main.add(1, '"""Run this rank\'s part of the program."""')
        main.add(1, "comm = MPI.COMM_WORLD")
        main.add(1, "rank = comm.Get_rank()")
        main.add(1, "size = comm.Get_size()")
        main.add(1, "acc = rank")
        for name in PRELUDE_ORDER:
            if name in self.needed:
                for line in PRELUDE[name]:
                    depth = (len(line) - len(line.lstrip(" "))) // 4
                    main.add(1 + depth, line.strip())
        main.extend(body)
        # one write per rank, so the lines of different ranks never interleave
        main.add(1, 'sys.stdout.write(f"TRACE {rank} {\',\'.join(TRACE)}\\n")')
        main.add(1, "sys.stdout.flush()")

        program = Program(self.index, self.seed, intent, kind)
        text_lines = HEADER.format(index=self.index, seed=self.seed, intent=intent,
                                   name=program.name).rstrip("\n").split("\n")
        for part in self.helpers + self.classes + [main]:
            text_lines += ["", ""]
            for indent, text, expect in part.lines:
                for k, piece in enumerate(text.split("\n")):
                    line = ("    " * indent + piece) if piece else ""
                    if expect and k == 0:
                        line += f"  # expect: {expect}"
                        program.expect.append((len(text_lines) + 1, expect))
                    text_lines.append(line)
        program.source = number_sites("\n".join(text_lines) + FOOTER)
        return program


def number_sites(source: str) -> str:
    """Give every collective's trace note its own site (``allreduce:7``), so a
    run in which ranks pair collectives from different lines is told apart
    from one where they agree; collectives designed to pair share a tag
    (``barrier:pair1``)."""
    counter = iter(range(1, 10_000))

    def site(match: re.Match) -> str:
        kind, tag = match.group(1), match.group(2)
        return f'note("{kind}:{tag or next(counter)}")'

    return re.sub(r'note\("(\w+)(?:=(\w+))?"\)', site, source)


def generate(seed: int = DEFAULT_SEED, count: int = DEFAULT_COUNT) -> list[Program]:
    """The programs for `seed`, identical on every call."""
    master = random.Random(seed)
    programs = []
    kinds: list = []
    for index in range(count):
        rng = random.Random(master.randrange(2**32))
        kind = ""
        if master.random() < 0.45:
            # cycle through every hazard kind so each one is represented evenly
            if not kinds:
                kinds = list(HAZARD_KINDS)
                master.shuffle(kinds)
            kind = kinds.pop()
        programs.append(ProgramBuilder(rng, index, seed).build(kind))
    return programs


def write(programs: list[Program], out: Path) -> None:
    """Write the programs (and nothing else) into `out`, replacing old ones."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("prog_*.py"):
        old.unlink()
    for program in programs:
        (out / program.name).write_text(program.source, encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    programs = generate(args.seed, args.count)
    write(programs, args.out)
    hazards = sum(p.intent == "hazard" for p in programs)
    print(f"wrote {len(programs)} programs ({hazards} with a placed hazard) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
