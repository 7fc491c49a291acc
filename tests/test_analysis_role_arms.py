"""Complementary role arms (issue 14, section 2.6): a sender arm and a
receiver arm of one ``if``/``else`` on the rank, each binding its own
locals for its own loop of broadcasts (cslint/analysis/arms.py ArmReads)."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


def test_each_role_arm_reads_only_what_it_binds_itself():
    # The sender walks its own tensors, the receivers allocate theirs from the
    # broadcast metadata; both name the loop's tensor `tensor`, and what one
    # arm binds never reaches the other (no loop around the role test).
    assert _lines("""
        import torch
        import torch.distributed as dist


        class Coordinator:
            def __init__(self, ranks, rank):
                self.ranks = ranks
                self.rank_in_group = ranks.index(rank)
                self.device_group = dist.new_group(ranks)
                self.cpu_group = dist.new_group(ranks, backend="gloo")

            def broadcast_object(self, obj, src=0):
                objs = [obj]
                dist.broadcast_object_list(objs, src=self.ranks[src], group=self.cpu_group)
                return objs[0]

            def broadcast_tensor_dict(self, tensor_dict=None, src=0):
                group = self.device_group
                metadata_group = self.cpu_group
                if self.rank_in_group == src:
                    metadata_list = [(k, (v.size(), v.device)) for k, v in tensor_dict.items()]
                    tensor_list = list(tensor_dict.values())
                    self.broadcast_object(metadata_list, src=src)
                    for tensor in tensor_list:
                        if tensor.numel() == 0:
                            continue
                        if tensor.is_cpu:
                            dist.broadcast(tensor, src=self.ranks[src], group=metadata_group)
                        else:
                            dist.broadcast(tensor, src=self.ranks[src], group=group)
                else:
                    metadata_list = self.broadcast_object(None, src=src)
                    tensor_dict = {}
                    for key, value in metadata_list:
                        tensor = torch.empty(value[0], device=value[1])
                        if tensor.numel() == 0:
                            tensor_dict[key] = tensor
                            continue
                        if tensor.is_cpu:
                            dist.broadcast(tensor, src=self.ranks[src], group=metadata_group)
                        else:
                            dist.broadcast(tensor, src=self.ranks[src], group=group)
                        tensor_dict[key] = tensor
                return tensor_dict
    """) == []


def test_what_an_arm_binds_still_differs_after_the_test_or_in_a_later_pass():
    assert _lines("""
        import torch.distributed as dist


        def read_after_the_test():
            if dist.get_rank() == 0:
                n = 1
            else:
                n = 2
            if n == 1:
                dist.barrier()


        def other_arm_in_a_later_pass(items):
            rank = dist.get_rank()
            seen = False
            for item in items:
                if item == rank:
                    seen = True
                else:
                    seen = seen
                    if seen:
                        dist.barrier()
    """) == [11, 23]


_LEAVING_ARM = """
    import torch.distributed as dist


    def note(x):
        return x


    class Handler:
        def __init__(self, group, last):
            self.group = group
            self.last = last

        def receive(self, t):
            dist.broadcast(t, src=self.last, group=self.group)

        def send(self, t):
            dist.broadcast(t, src=self.last, group=self.group)

        def other(self, t):
            dist.all_reduce(t, group=self.group)


    class Runner:
        def __init__(self, handler, world):
            self.handler = handler
            self.is_last = dist.get_rank() == world - 1
            self.a = self.b = self.c = self.d = self.e = self.f = self.g = None

        def step(self, t):
            if not self.is_last:
                self.handler.receive(t)
                return None
            if self.a:
                note(1)
            if self.b:
                note(2)
            if self.c:
                note(3)
            if self.d:
                note(4)
            if self.e:
                note(5)
            if self.f:
                note(6)
            if self.g:
                note(7)
            self.handler.SENDER(t)
            return t
"""


def test_a_leaving_receiver_arm_joins_the_senders_rest_of_many_paths():
    # seven independent tests after the receiver's arm: 128 paths, too many
    # to enumerate; the rest is read by the sites it may issue
    assert _lines(_LEAVING_ARM.replace("SENDER", "send")) == []


def test_a_rest_of_many_paths_that_issues_another_collective_still_differs():
    assert _lines(_LEAVING_ARM.replace("SENDER", "other")) == [32, 48]


def test_what_a_nested_function_of_the_rest_would_issue_is_not_issued():
    nested = _LEAVING_ARM.replace("            self.handler.SENDER(t)\n",
                                  "            def later():\n                self.handler.send(t)\n")
    assert _lines(nested) == [32]
