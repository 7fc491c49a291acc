"""A fast path through a communicator beside its fall-through collective
(issue 14, complementary-role-arms): which one a rank takes must be agreed,
since the two are different kernels that never meet one another.

``if comm.fits(x): return comm.ipc_all_reduce(x)`` then
``dist.all_reduce(x, group=g)``: the fast path exchanges through the
communicator's peer buffers, the fall-through through the process group.
A rank on the fast path waits in the IPC kernel for peers that wait in the
process group's all-reduce: they hang, even though both all-reduce over the
same ranks.  SGLang's ``GroupCoordinator.all_reduce`` (parallel_state.py
773, 1053, labelled TP) is this shape: a PCIe-IPC workspace build that fails
on one rank only turns that rank to another all-reduce method than its
peers.  So a method no preset names, called on an object built over a
group (``IpcCommunicator(group=self.device_group)``), is no collective for
the arm comparison: an arm reaching it does not match the fall-through,
and the guard's own test decides whether the arms part the ranks (counted
as collectives over the group, such methods match the fall-through and
line 773 is no longer reported).  Two routes the presets both name, a
communicator's ``all_reduce`` and the process group's, are one operation
over one group asked of two communicators, which parts the ranks too
(``analysis/issuingroutes.py``, tests/test_analysis_issuing_routes.py).

The SGLang findings labelled FP of this shape (inkling comm.py 576/589,
parallel_state.py 1151, usp.py 149) are false for another reason: their
guard reads only what every member holds alike (platform, group size,
payload size), and that is where they must be answered."""

import textwrap

from cslint.api import check_source

_HEADER = """
    import torch
    import torch.distributed as dist
    from ipc_kernels import allocate_ipc_workspace


    class IpcCommunicator:
        def __init__(self, group, device):
            self.group = group
            self.disabled = False
            try:
                self.workspace = allocate_ipc_workspace(device)
            except Exception:
                self.disabled = True

        def fits(self, x):
            return x.numel() < 4096

        def ipc_all_reduce(self, x):
            return self.workspace.run(x)


    class Coordinator:
        def __init__(self, ranks, device):
            self.cpu_group = dist.new_group(ranks, backend="gloo")
            self.device_group = dist.new_group(ranks)
            self.ipc_comm = IpcCommunicator(group=self.device_group, device=device)
"""


def _lines(body):
    source = textwrap.dedent(_HEADER) + textwrap.dedent(body)
    return sorted(f.line for f in check_source(source, report="per-site").findings)


def test_a_backend_chosen_by_a_local_failure_parts_the_ranks():
    # The workspace build may fail on one rank alone: that rank falls through
    # to the process group's all-reduce while its peers run the IPC kernel.
    assert _lines("""
        class FallingBackCoordinator(Coordinator):
            def all_reduce(self, x):
                if not self.ipc_comm.disabled:
                    return self.ipc_comm.ipc_all_reduce(x)
                dist.all_reduce(x, group=self.device_group)
                return x
    """) == [33]


def test_a_communicator_fast_path_chosen_by_a_rank_local_size_parts_the_ranks():
    # A typed coordinator's own communicator, chosen by the size of this
    # rank's rows: the ranks whose rows fit run the IPC kernel, the others the
    # coordinator's all-reduce over the same ranks.
    assert _lines("""
        def reduce_rows(coordinator: Coordinator, rows):
            mine = rows[: dist.get_rank() + 1]
            comm = coordinator.ipc_comm
            if comm.fits(mine):
                return comm.ipc_all_reduce(mine)
            return coordinator.all_reduce(mine)
    """) == [34]


def test_a_local_op_beside_the_fall_through_parts_the_ranks():
    # The early arm is no exchange at all: the ranks taking it skip the
    # all-reduce their peers wait in.
    assert _lines("""
        def scale_rows(coordinator: Coordinator, rows):
            mine = rows[: dist.get_rank() + 1]
            if mine.numel() < 4096:
                return mine * 2
            return coordinator.all_reduce(mine)
    """) == [33]
