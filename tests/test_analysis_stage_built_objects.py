"""An object built only on some pipeline stages from a local bound in the same
arm (issue 14 §2.1/§2.3): every rank holding the object took the arm, so the
stage test does not make its fields differ between those ranks.  The summary
walk leaves the test out of what such a local holds, as the dataflow does for
a deep function (arms.ArmReads / arms.ArmLocals).  Each VALID shape sits
beside the INVALID one that must still be reported."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


SHARDS = """
    import torch.distributed as dist

    class Shards:
        def __init__(self, tensor, group):
            self.group = group
            self.count = dist.get_world_size(group=self.group)
            self.even = tensor.numel() % self.count == 0

        def gather(self, out):
            if self.even:
                dist.all_gather_into_tensor(out, out, group=self.group)  # line 12
            return out

    class Runner:
        def __init__(self, topology):
            self.topology = topology

        def is_last_stage(self):
            return self.topology.stage_id() == self.topology.stages - 1

        def forward(self, outputs):
            if not self.is_last_stage():
                head = outputs[0]
                return Shards(tensor=head, group=self.topology.slice_group())
            return None
"""

# what the arm binds is read after it too: the stage test decides which value it holds there
READ_AFTER = SHARDS.replace("""            if not self.is_last_stage():
                head = outputs[0]
                return Shards(tensor=head, group=self.topology.slice_group())
            return None""", """            head = None
            if not self.is_last_stage():
                head = outputs[0]
            return Shards(tensor=head, group=self.topology.slice_group())""")

# the arm's local handed to a method that stores it: the call's own test still reaches the field
METHOD_STORE = """
    import torch.distributed as dist

    class Flag:
        def __init__(self):
            self.on = False

        def set(self, value):
            self.on = value

        def run(self, x):
            if self.on:
                dist.all_reduce(x)  # line 13

    def turn_on(flag: Flag, x):
        if dist.get_rank() == 0:
            value = True
            flag.set(value)
        flag.run(x)
"""


def test_fields_of_an_object_built_in_a_stage_arm_agree():
    assert _lines(SHARDS) == []


def test_a_local_read_after_the_stage_arm_still_differs():
    assert _lines(READ_AFTER) == [12]


def test_a_method_storing_the_arms_local_still_differs():
    assert _lines(METHOD_STORE) == [13]
