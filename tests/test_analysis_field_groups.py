"""A field passed as a process group to a helper whose collective runs over
that parameter (``poll_and_all_reduce(self.queue, self.gloo_group)`` in
SGLang's disaggregation queues; issue 14): the group is the one every
assignment of the field in the file names (``self.gloo_group =
parallel.attn_tp_group.cpu_group``: the attention TP group), as for a
collective over the field itself (``ModuleContext.group_arguments``).  A
stage predicate is then harmless under it; a field set to the pipeline
group, or to two different groups, still endangers the call.
"""

import textwrap

from cslint.api import check_paths

SHAPES = """
    import torch.distributed as dist


    def all_reduce_flags(flags, group):
        dist.all_reduce(flags, group=group)
        return flags


    class PollQueue:
        def __init__(self, parallel):
            self.gloo_group = parallel.attn_tp_group.cpu_group
            self.ring = parallel.pp_group.cpu_group
            self.mixed = parallel.tp_group.cpu_group

        def rebind(self, parallel):
            self.mixed = parallel.pp_group.cpu_group

        def poll(self, flags):
            return all_reduce_flags(flags, self.gloo_group)

        def poll_ring(self, flags):
            return all_reduce_flags(flags, group=self.ring)

        def poll_mixed(self, flags):
            return all_reduce_flags(flags, self.mixed)


    class Scheduler:
        def __init__(self, parallel):
            self.pp_rank = parallel.pp_rank
            self.queue = PollQueue(parallel)

        def step(self, flags):
            if self.pp_rank == 0:
                self.queue.poll(flags)          # VALID: the field is the attention TP group, inside one stage
            return flags

        def step_ring(self, flags):
            if self.pp_rank == 0:
                self.queue.poll_ring(flags)          # INVALID: the field is the pipeline group
            return flags

        def step_mixed(self, flags):
            if self.pp_rank == 0:
                self.queue.poll_mixed(flags)          # INVALID: the field is set to two different groups
            return flags
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def test_a_field_passed_as_a_group_is_the_group_its_assignments_name(tmp_path):
    source = textwrap.dedent(SHAPES)
    (tmp_path / "module.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.path.endswith("module.py")})
    assert flagged == _marked(source, "INVALID")
    assert _marked(source, "VALID")
