"""Arms that issue one operation over one group by different routes (issue
14, section 2.6): a helper named for the operation
(``tensor_model_parallel_all_reduce``) in one arm and the operation itself
in the other, or a callee choosing between two collectives of the same
operation over the group the caller hands it, keep every rank in step
(cslint/analysis/uniformity.py ``_names_reached``,
``Knowledge.operation``)."""

import textwrap

from cslint.api import check_source
from cslint.presets import load_presets


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


_HEADER = """
    import torch
    import torch.distributed as dist
    from vllm.distributed import get_tensor_model_parallel_rank, get_tp_group, tensor_model_parallel_all_reduce


    def inplace_all_reduce(tensor, fused, group):
        if fused:
            dist.all_reduce(tensor, group=group.cpu_group)
        else:
            dist.all_reduce(tensor, group=group.device_group)


    class ShardedTable:
        def __init__(self, rows):
            self.rows = rows
            self.row_start = get_tensor_model_parallel_rank() * rows
"""


def test_an_arm_calling_the_helper_matches_an_arm_issuing_the_operation():
    # Each arm all-reduces over tp: one through the group object, the other
    # through the module helper named for the operation.
    assert _lines(_HEADER + """
        def lookup(self, values):
            if self.row_start == 0:
                get_tp_group().all_reduce(values)
                return values
            return tensor_model_parallel_all_reduce(values)
    """) == []


def test_a_callee_choosing_between_two_routes_over_one_group_issues_one_operation():
    # The callee all-reduces over one of two communicators of the group it is
    # handed; here both are tp's, so the call issues one all-reduce over tp,
    # as the other arm does.  Which communicator the library helper asks is
    # its own choice, unknown here, so the two are not told apart by it
    # (tests/test_analysis_issuing_routes.py).
    assert _lines(_HEADER + """
        def lookup(self, values, fused):
            if self.row_start == 0:
                inplace_all_reduce(values, fused, get_tp_group())
            else:
                values = tensor_model_parallel_all_reduce(values)
            return values
    """) == []


def test_other_operations_or_an_arm_without_one_still_differ():
    assert _lines(_HEADER + """
        def other_operation(self, values):
            if self.row_start == 0:
                get_tp_group().all_gather(values)
                return values
            return tensor_model_parallel_all_reduce(values)

        def one_arm_only(self, values, fused):
            if self.row_start == 0:
                inplace_all_reduce(values, fused, get_tp_group())
            else:
                values = values * 2
            return values
    """) == [21, 23, 27]


def test_the_presets_name_the_operation_of_the_helpers():
    knowledge = load_presets(["torch_distributed"])
    assert knowledge.operation("tensor_model_parallel_all_reduce") == "all_reduce"
    assert knowledge.operation("reduce_scatter_to_sequence_parallel_region") == "reduce_scatter"
    assert knowledge.operation("broadcast") == "broadcast"
