"""``deepspeed.comm`` keeps torch.distributed's signatures: the tensor or list
a collective is handed first holds the group's agreed result afterwards."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


# An optimizer's overflow check: this rank's own count of bad gradients,
# all-reduced with MAX over the data-parallel group in place, then read back.
OVERFLOW = """
    import torch
    from deepspeed import comm as dist
    from deepspeed.accelerator import get_accelerator


    class Optimizer:
        def __init__(self, dp_process_group, grads):
            self.dp_process_group = dp_process_group
            self.grads = grads
            self.partition_id = dist.get_rank(group=self.dp_process_group)

        def count_bad(self):
            count = torch.zeros([1])
            for g in self.grads[self.partition_id]:
                count += g.isnan().sum()
            return count.bool()

        def has_overflow(self):
            overflow = self.count_bad()
            overflow_gpu = overflow.byte().to(get_accelerator().current_device_name())
            dist.all_reduce(overflow_gpu, op=dist.ReduceOp.MAX, group=self.dp_process_group)
            return bool(overflow_gpu[0].item())

        def step(self, t):
            if not self.has_overflow():
                dist.all_reduce(t, group=self.dp_process_group)
"""


def test_a_flag_all_reduced_in_place_by_deepspeed_comm_is_agreed():
    assert _codes(OVERFLOW) == []


def test_the_flag_read_before_its_all_reduce_still_differs():
    source = OVERFLOW.replace("            return bool(overflow_gpu[0].item())", "            return bool(overflow.item())")
    assert _codes(source) == [("CSL101", 27)]


def test_a_gather_into_a_list_by_deepspeed_comm_agrees_the_list():
    source = OVERFLOW.replace(
        "            dist.all_reduce(overflow_gpu, op=dist.ReduceOp.MAX, group=self.dp_process_group)\n"
        "            return bool(overflow_gpu[0].item())",
        "            flags = [None] * dist.get_world_size(group=self.dp_process_group)\n"
        "            dist.all_gather_object(flags, bool(overflow.item()), group=self.dp_process_group)\n"
        "            return any(flags)")
    assert _codes(source) == []
