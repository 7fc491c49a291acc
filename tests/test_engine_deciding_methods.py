"""The module defining a record class that a method hands back is read like
one a module-level helper hands back (issue 14, uniform-after-collective-not-recognised).

A scheduler's step helper (``self.next_plan(...)``) returns a plan record,
``StepPlan(batch_to_run=batch, running=running)``, of a dataclass in a module
with no collective of its own; the loop reads ``plan.batch_to_run`` and runs a
collective when it is there.  The batch comes back from an exchange over the
group, the same on every rank, while the running list beside it is this rank's
own slice.  Read, the record binds each argument to its own field, so the
batch's test reads the exchanged batch alone.  Before, the gather followed the
returns of module-level functions only, so no round parsed the record's module
when a method built it: the construction ran nothing of the tree, its result
was every argument at once, and the batch's test read the running slice.

The same holds of a mixin's loop calling a helper that the class it is mixed
into defines (``self.next_plan()`` in the mixin, defined by the scheduler that
names the mixin as a base)."""

import pytest

from cslint.api import check_paths

_PLAN = """\
from dataclasses import dataclass
from typing import Optional


@dataclass
class StepPlan:
    batch_to_run: Optional[list]
    running: list
"""

_SCHEDULER = """\
import torch.distributed as dist

from pkg.plan import StepPlan
from pkg.loops import LoopMixin


class Scheduler(LoopMixin):
    def __init__(self, rank, queue):
        self.rank = rank
        self.queue = queue

    def agreed_batch(self):
        counts = [None] * dist.get_world_size()
        dist.all_gather_object(counts, len(self.queue))
        return None if not any(counts) else list(self.queue)

    def next_plan(self, running) -> StepPlan:
        return StepPlan(batch_to_run=self.agreed_batch(), running=running)
{loop}"""

_LOOP = """
    def loop(self, x):
        plan = self.next_plan(self.queue[: self.rank])
        if {test}:
            dist.all_reduce(x)
"""

_LOOPS = """\
import torch.distributed as dist


class LoopMixin:
    def mixed_loop(self, x):
        plan = self.next_plan(self.queue[: self.rank])
        if {test}:
            dist.all_reduce(x)
"""


def _findings(tmp_path, test="plan.batch_to_run is not None", jobs=1, own_loop=True):
    package = tmp_path / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "plan.py").write_text(_PLAN)
    (package / "scheduler.py").write_text(_SCHEDULER.format(loop=_LOOP.format(test=test) if own_loop else ""))
    (package / "loops.py").write_text(_LOOPS.format(test=test))
    findings = check_paths([str(tmp_path)], cache=False, jobs=jobs, report="per-site").findings
    return sorted((f.code, f.path.rsplit("/", 1)[-1], f.line) for f in findings)


_COLLECTIVE = {"scheduler.py": _SCHEDULER.format(loop=_LOOP).splitlines().index("            dist.all_reduce(x)") + 1,
               "loops.py": _LOOPS.splitlines().index("            dist.all_reduce(x)") + 1}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_field_of_a_record_a_method_builds_holds_its_own_argument(tmp_path, jobs):
    assert _findings(tmp_path, jobs=jobs) == []


def test_the_field_the_rank_local_slice_went_to_still_differs(tmp_path):
    assert _findings(tmp_path, test="plan.running") == [
        ("CSL101", "loops.py", _COLLECTIVE["loops.py"]), ("CSL101", "scheduler.py", _COLLECTIVE["scheduler.py"])]


def test_a_mixin_s_loop_reads_the_record_the_class_it_is_mixed_into_builds(tmp_path):
    assert _findings(tmp_path, own_loop=False) == []
    assert _findings(tmp_path / "local", test="plan.running", own_loop=False) == [
        ("CSL101", "loops.py", _COLLECTIVE["loops.py"])]
