"""A field every ``self.attr = ...`` of the file sets to whether this process
is part of a distributed job (``self.distributed = dist.is_initialized()``,
through torch.distributed or DeepSpeed's ``deepspeed.comm``) folds as that
call does (``feasibility.job_fields``): a hang needs a job of several ranks,
where it holds.  So the agreement ``if self.distributed:
dist.all_reduce(flag)`` runs on every path the analysis reads, and what is
read from the reduced flag is the collective's result: a profiler that votes
on a cache hit and then averages its measurements only where every rank
missed takes the same way on every rank.  A field also set from anything
else, or a collective under a local test, stays reported."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return [f.line for f in check_source(textwrap.dedent(source)).findings]


PROFILER = """
    import torch
    import {module} as dist


    class Profiler:
        def __init__(self, group, settings):
            self.process_group = group
            self.distributed = {job}
            self.cache = {{}}

        def run_node(self, key, fn):
            hit = key in self.cache
            flag = torch.tensor([0 if hit else 1], dtype=torch.int)
            if self.distributed:
                dist.all_reduce(flag, dist.ReduceOp.SUM, group=self.process_group)
            hit = flag.item() == 0
            error = None
            value = 0.0
            try:
                value = fn()
            except Exception as e:
                error = e
            if not hit:
                values = torch.tensor([value])
                if self.distributed:
                    dist.all_reduce(values, dist.ReduceOp.AVG, group=self.process_group)  # line 27
                if error is None:
                    self.cache[key] = values[0].item()
"""


def test_a_field_holding_whether_deepspeed_comm_is_initialized_folds():
    assert _lines(PROFILER.format(module="deepspeed.comm", job="dist.is_initialized()")) == []


def test_a_field_holding_whether_torch_distributed_is_initialized_folds():
    assert _lines(PROFILER.format(module="torch.distributed", job="dist.is_initialized()")) == []


def test_a_field_also_set_from_a_setting_does_not_fold():
    source = PROFILER.format(module="torch.distributed", job="dist.is_initialized()").replace(
        "self.cache = {}", "self.cache = {}\n        self.distributed = settings.distributed")
    assert _lines(source) == [28]


def test_a_field_set_from_another_call_does_not_fold():
    assert _lines(PROFILER.format(module="torch.distributed", job="settings.is_initialized()")) == [27]


def test_the_job_tests_are_the_loaded_packs_own():
    # DeepSpeed's is its pack's knowledge: without the pack its call says nothing of the job
    from cslint.config import Settings
    from cslint.presets import load_presets

    assert "deepspeed.comm.is_initialized" in load_presets(["deepspeed"]).job_tests
    assert load_presets(["torch_distributed"]).job_tests == {"torch.distributed.is_initialized",
                                                             "torch.distributed.is_available"}
    source = textwrap.dedent(PROFILER.format(module="torch.distributed", job="deepspeed.comm.is_initialized()"))
    source = source.replace("import torch\n", "import torch\nimport deepspeed.comm\n", 1)
    assert [f.line for f in check_source(source).findings] == []
    bare = Settings(presets=["torch_distributed", "mpi4py"])
    assert [f.line for f in check_source(source, settings=bare).findings] == [28]
