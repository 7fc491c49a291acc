"""Two shapes of the real-tree false findings of issue 14 (causes
uniform-after-collective-not-recognised and complementary-role-arms) whose
quiet reading is sound but not yet modelled, pinned as strict xfails beside
the hazards next to them, which stay reported.

1. One communicator field by two spellings.  ``self.fast_comm =
   FastComm(group=self.cpu_group)``: a local copy (``comm =
   self.fast_comm; comm.all_reduce(x)``) runs over the group the field was
   built over (``group_of_text`` through ``built_over_fields``), the field
   called directly (``self.fast_comm.all_reduce(x)``) over the world
   (``CollectiveGroups._infer_group`` asks only the receiver's words), so
   arms asking the one object through the two spellings compare as two
   groups.  Reading the direct spelling as the built-over group quiets
   them, but a coordinator found by its registered name
   (``_groups[group_name]()``) then has that self-relative group renamed to
   the name its caller passes, and SGLang parallel_state.py:762 comes back
   (session 53, agreed53): the registry lookup has to resolve first.

2. A flag tested twice.  ``if rank0_only: osd = share(osd)`` then ``if
   rank0_only: for key in osd: ...``: the names the flag's first arm
   binds hold, in a later arm of the same test of names bound once, what
   that arm bound (the broadcast copy), not the value the ranks that skipped
   it kept (the counterpart of ``exclusive.py``, which restores what they held
   where the later test rules the first arm out).  torch fsdp
   _optim_utils.py:471 needs more: the value is read through a name derived
   between the two tests, and the caller's ``if rank0_only and rank > 0:
   state = {}`` correlates with the callee's flag across the call."""

import textwrap

import pytest

from cslint.api import check_source

_COMMUNICATOR = """
    import torch.distributed as dist


    class FastComm:
        def __init__(self, group, device):
            self.group = group

        def all_reduce(self, x):
            dist.all_reduce(x, group=self.group)
            return x


    class Coordinator:
        def __init__(self, ranks, device):
            self.cpu_group = dist.new_group(ranks, backend="gloo")
            self.device_group = dist.new_group(ranks)
            self.fast_comm = FastComm(group=self.cpu_group, device=device)
"""

_FLAG = """
    import torch.distributed as dist


    def share(state, group):
        objects = [state if dist.get_rank(group) == 0 else None]
        dist.broadcast_object_list(objects, src=0, group=group)
        return objects[0]


    def load(state, group, rank0_only):
        if rank0_only and dist.get_rank(group) > 0:
            state = {}
        flatten(state, group, rank0_only)
"""


def _lines(header, body):
    first = len(textwrap.dedent(header).splitlines())
    source = textwrap.dedent(header) + textwrap.dedent(body)
    return sorted(f.line - first for f in check_source(source, report="per-site").findings)


@pytest.mark.xfail(strict=True, reason="a communicator field called directly reads over the world, a local copy of "
                   "it over the group it was built over (see the module)")
def test_one_communicator_field_by_two_spellings_matches():
    assert _lines(_COMMUNICATOR, """
        class Chooser(Coordinator):
            def all_reduce_by_rank(self, x):
                if dist.get_rank() == 0:
                    comm = self.fast_comm
                    return comm.all_reduce(x)
                return self.fast_comm.all_reduce(x)
    """) == []


def test_a_communicator_field_and_another_route_part_the_ranks():
    # The field's communicator and the device group's are two
    # communicators over one rank list; an arm alone runs on rank 0 only.
    assert _lines(_COMMUNICATOR, """
        class Chooser(Coordinator):
            def all_reduce_by_rank(self, x):
                if dist.get_rank() == 0:
                    return self.fast_comm.all_reduce(x)
                dist.all_reduce(x, group=self.device_group)
                return x

            def one_arm(self, x):
                if dist.get_rank() == 0:
                    self.fast_comm.all_reduce(x)
                return x
    """) == [5, 6, 11]


@pytest.mark.xfail(strict=True, reason="a later arm of the same test of names bound once reads the join of what the "
                   "first arm bound and what the others kept (see the module)")
def test_a_flag_tested_twice_reads_its_first_arm():
    assert _lines(_FLAG, """
        def flatten(state, group, rank0_only):
            osd = state
            if rank0_only:
                osd = share(state, group)
            if rank0_only:
                for key in osd:
                    dist.barrier(group=group)
    """) == []


def test_a_flag_tested_twice_still_reports_what_the_first_arm_did_not_agree():
    # The first arm agrees another name; the loop's own value is this
    # rank's (emptied on the others), so its trip count differs.  And the
    # same loop under another flag the first arm's test does not imply.
    assert _lines(_FLAG, """
        def flatten(state, group, rank0_only):
            osd = state
            meta = None
            if rank0_only:
                meta = share(state, group)
            if rank0_only:
                for key in osd:
                    dist.barrier(group=group)

        def flatten_other(state, group, rank0_only, verbose):
            osd = state
            if rank0_only:
                osd = share(state, group)
            if verbose:
                for key in osd:
                    dist.barrier(group=group)

        def load_other(state, group, rank0_only, verbose):
            if rank0_only and dist.get_rank(group) > 0:
                state = {}
            flatten_other(state, group, rank0_only, verbose)
    """) == [9, 17]
