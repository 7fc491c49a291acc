"""What a collective hands back (issue 14, uniform-after-collective-not-recognised):
a reduce-scatter over equal splits gives every rank of the group a part of the
same shape whose contents are its own, so a test of that part's structure (its
shape, whether the result is there) is the same on every rank, while a test of
its contents is not; a gather, or a reduce-scatter with per-rank sizes, hands
back results of different shapes."""

import textwrap

from cslint.api import check_source


def _lines(source, **kw):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings)


def test_a_reduce_scatter_part_has_one_shape_on_every_rank():
    assert _lines("""
        from vllm.distributed import (get_tp_group, tensor_model_parallel_all_reduce,
                                      tensor_model_parallel_gather, tensor_model_parallel_reduce_scatter)

        def shape_test(x):
            part = tensor_model_parallel_reduce_scatter(x, 0)
            if part.shape[0] > 16:
                part = tensor_model_parallel_all_reduce(part)
            return part

        def method_shape_test(x):
            part = get_tp_group().reduce_scatter(x, 0)
            if part is None or part.shape[0] == 0:
                return x
            return tensor_model_parallel_all_reduce(part)

        def contents_test(x):
            part = tensor_model_parallel_reduce_scatter(x, 0)
            if part.sum() > 0:                                    # reported: the contents are this rank's
                part = tensor_model_parallel_all_reduce(part)
            return part

        def gathered(x):
            out = tensor_model_parallel_gather(x, 0, 0)
            if out is not None:                                   # reported: only the destination has it
                out = tensor_model_parallel_all_reduce(out)
            return out

        def variable_sizes(x, sizes):
            part = get_tp_group().reduce_scatterv(x, 0, sizes)
            if part.shape[0] > 16:                                # reported: each rank's own size
                part = tensor_model_parallel_all_reduce(part)
            return part
    """) == [20, 26, 32]


# A helper that all-reduces one flag or a list of flags and hands back what the
# reduction gave, read through the tensor's own methods: which return a rank
# takes follows the argument's type, and whichever it takes, the value comes
# from the one all-reduce every rank entered.  A state machine moves on that
# answer alone, so its later tests agree although the flag it passes was set
# from a random draw on some ranks.
_ANY_FLAG = """
    import random

    import torch
    import torch.distributed as dist


    class Retrier:
        def __init__(self):
            self.phase = "idle"
            self.wants_retry = False

        def _any_rank(self, value):
            if isinstance(value, list):
                votes = torch.tensor(value, dtype=torch.int32)
                dist.all_reduce(votes)
                return tuple([v > 0 for v in votes.tolist()])
            else:
                votes = torch.tensor([value], dtype=torch.int32)
                dist.all_reduce(votes)
                return votes.item() > 0

        def check(self, loss):
            if random.random() < 0.01:
                self.wants_retry = True

        def next_step(self):
            if self.phase == "idle":
                self.phase = "first"
                return True
            if self.phase == "first":
                again = self._any_rank(self.wants_retry)
                if not again:
                    self.phase = "idle"
                    return False
                self.phase = "retry"
                return True
            if self.phase == "retry":
                same, done = self._any_rank([self.wants_retry, False])
                if same:
                    self.phase = "idle"
                dist.barrier()
            return False
"""


def test_a_return_made_only_of_one_groups_reduction_agrees_whichever_return_runs():
    assert _lines(_ANY_FLAG) == []


def test_a_return_of_this_ranks_own_flag_beside_the_reduction_keeps_the_choice():
    # one branch hands back the rank's own flag instead of the reduction
    source = _ANY_FLAG.replace("return votes.item() > 0", "return bool(value)")
    assert "bool(value)" in source
    assert _lines(source) != []


def test_a_value_read_from_a_collective_and_a_rank_id_keeps_the_choice():
    source = _ANY_FLAG.replace("return votes.item() > 0", "return votes.item() > dist.get_rank()")
    assert "dist.get_rank()" in source
    assert _lines(source) != []


def test_a_bare_return_beside_the_reduction_keeps_the_choice():
    # a rank whose own probe fails hands back None (a bare ``return``, after
    # the reduction) while the others return the reduction, so whether there
    # is a result differs (line 17).  (Before the reduction, the ranks that
    # stayed would wait in it for those that left: that exit is reported
    # there, and what comes back is settled: test_analysis_settled_exits.)
    assert _lines("""
        import torch
        import torch.distributed as dist


        def agreed_capability(group, device):
            flag = torch.tensor([1])
            dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=group)
            if not torch.cuda.can_device_access_peer(torch.cuda.current_device(), 0):
                return
            return flag.item() > 0


        def setup(group, device):
            if agreed_capability(group, device) is None:
                return
            dist.barrier(group=group)
    """) == [17]


# The same, returned inside a tuple: rank 0 reads a plan and broadcasts it with
# its size, the others receive both, and each hands back the pair.
_PLAN_PAIR = """
    import torch.distributed as dist


    def read_plan(path):
        with open(path) as fh:
            return fh.read()


    def exchange_plan(path, group):
        if dist.get_rank(group) == 0:
            text = read_plan(path)
            box = [text, len(text)]
            dist.broadcast_object_list(box, src=0, group=group)
            return box[0], box[1]
        box = [None, 0]
        dist.broadcast_object_list(box, src=0, group=group)
        return box[0], box[1]


    def run(path, group):
        plan, size = exchange_plan(path, group)
        if plan is None or size == 0:
            return
        dist.barrier(group=group)
"""


def test_elements_of_a_returned_tuple_made_of_one_groups_broadcast_agree():
    assert _lines(_PLAN_PAIR) == []


def test_an_element_beside_them_that_is_this_ranks_own_keeps_the_choice():
    # rank 0 hands back its own rank id as the size, the others what they received
    source = _PLAN_PAIR.replace("return box[0], box[1]", "return box[0], dist.get_rank()", 1)
    assert "return box[0], dist.get_rank()" in source
    assert _lines(source) == [25]
