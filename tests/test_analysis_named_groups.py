"""A group coordinator's name says which group its own process groups are
(``namedgroups.py``, the vLLM preset's ``group_names``; issue 14): a
communicator handed ``unique_name`` beside its ``cpu_group`` builds a fast
path over ``self.cpu_group`` only where the name's part before ``:`` is
``"tp"`` (directly, or through a flag every true binding of which lies
there), so the fast path's collectives run over the TP group and a stage test
parts none of its members.  The fast path's collectives count so whether it
issues them itself or hands its group field to a helper
(``_all_true(self.group, ok)``), and a check that the class has an attribute
(``hasattr(Fast, "capture")``) builds no object of it out of sight.

Built where no test says the name (a flag of another setting), under a
prefix test without the separator (``startswith("tp")`` also holds for
``"tpx"``), where the flag is also set true outside the test, or over a
group field the name does not name, the object's group stays unknown and the
stage test still endangers the collective; so does one built over the
builder's own group field after the builder set it from another group.
"""

import textwrap

from cslint.api import check_paths

FAST = """
    import torch
    import torch.distributed as dist


    def _all_true(group, ok):
        flag = torch.tensor([int(ok)])
        dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=group)
        return bool(flag.item())


    class Fast:
        def __init__(self, group):
            self.group = group
            dist.barrier(group=group)

        def capture(self, parallel, t):
            if parallel.pp_rank == 0:
                dist.all_reduce(t, group=self.group)          # VALID: built over the TP group only
            return t

        def prepare(self, parallel, buffer):
            if parallel.pp_rank == 0:
                return None
            return _all_true(self.group, buffer is not None)          # VALID: the same group, handed on


    class Loose:
        def __init__(self, group):
            self.group = group
            dist.barrier(group=group)

        def capture(self, parallel, t):
            if parallel.pp_rank == 0:
                dist.all_reduce(t, group=self.group)          # INVALID: built where no test names the group
            return t


    class Prefixed:
        def __init__(self, group):
            self.group = group
            dist.barrier(group=group)

        def capture(self, parallel, t):
            if parallel.pp_rank == 0:
                dist.all_reduce(t, group=self.group)          # INVALID: "tpx" starts with "tp" too
            return t


    class Either:
        def __init__(self, group):
            self.group = group
            dist.barrier(group=group)

        def capture(self, parallel, t):
            if parallel.pp_rank == 0:
                dist.all_reduce(t, group=self.group)          # INVALID: its flag is set outside the test too
            return t


    class Direct:
        def __init__(self, group):
            self.group = group
            dist.barrier(group=group)

        def capture(self, parallel, t):
            if parallel.pp_rank == 0:
                dist.all_reduce(t, group=self.group)          # VALID: built under the name's own test
            return t


    class Swapped:
        def __init__(self, group):
            self.group = group
            dist.barrier(group=group)

        def capture(self, parallel, t):
            if parallel.pp_rank == 0:
                dist.all_reduce(t, group=self.group)          # INVALID: the builder rewired its group field
            return t


    class Other:
        def __init__(self, group):
            self.group = group
            dist.barrier(group=group)

        def capture(self, parallel, t):
            if parallel.pp_rank == 0:
                dist.all_reduce(t, group=self.group)          # INVALID: a group field the name does not name
            return t
"""

COMMUNICATOR = """
    import os

    from fast import Direct, Either, Fast, Loose, Other, Prefixed, Swapped


    class CommunicatorBase:
        def __init__(self, cpu_group, unique_name=""):
            self.cpu_group = cpu_group
            self.unique_name = unique_name


    class Communicator(CommunicatorBase):
        def __init__(self, cpu_group, unique_name="", side_group=None):
            super().__init__(cpu_group, unique_name)
            self.side_group = side_group
            if unique_name.split(":")[0] != "tp":
                use_fast = False
                use_either = True
            else:
                use_fast = os.environ.get("FAST") == "1"
                use_either = os.environ.get("EITHER") == "1"
            if use_fast and cpu_group.size() > 1:
                self.fast = Fast(group=self.cpu_group)
                self.other = Other(group=self.side_group)
            if os.environ.get("LOOSE") == "1":
                self.loose = Loose(group=self.cpu_group)
            if unique_name.startswith("tp"):
                self.prefixed = Prefixed(group=self.cpu_group)
            if use_either:
                self.either = Either(group=self.cpu_group)
            if cpu_group.size() > 1 and unique_name.partition(":")[0] == "tp":
                self.direct = Direct(group=cpu_group)


    class Rewired(CommunicatorBase):
        def __init__(self, cpu_group, unique_name="", side_group=None):
            super().__init__(cpu_group, unique_name)
            self.cpu_group = side_group
            if unique_name.split(":")[0] == "tp":
                self.swapped = Swapped(group=self.cpu_group)

        def has_capture(self):
            return hasattr(Fast, "capture")          # reads an attribute of the class, builds nothing
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_a_group_built_where_the_coordinator_name_says_tp_is_the_tp_group(tmp_path):
    fast = textwrap.dedent(FAST)
    (tmp_path / "fast.py").write_text(fast)
    (tmp_path / "communicator.py").write_text(textwrap.dedent(COMMUNICATOR))
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.path.endswith("fast.py")})
    assert flagged == _marked(fast, "INVALID")
    assert _marked(fast, "VALID")
