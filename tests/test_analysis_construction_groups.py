"""A field of an object that every construction of its class hands one
named group (``Part(t, group=grid.tp_group.cpu_group)``, and a classmethod
building ``cls(t, group=group)`` from what its callers pass) is that group
(``constructiongroups.py``; issue 14): a collective over ``self.group`` in a
method of the class runs over it, so a stage test is harmless there.  A
class built over two different groups, over the pipeline group, through a
classmethod handed another group, or whose field a method writes again,
a class a dispatcher or a module's table hands out (then built where no call
names it), keeps the field unknown, and the stage test still endangers the
call.
"""

import textwrap

from cslint.api import check_paths

PARTS = """
    import torch.distributed as dist


    class Part:
        def __init__(self, tensor, group):
            self.group = group
            self.data = tensor

        @classmethod
        def from_meta(cls, meta, data, group):
            part = cls(data, group=group)
            part.meta = meta
            return part

        def full(self, parallel):
            if parallel.pp_rank == 0:
                dist.all_reduce(self.data, group=self.group)          # VALID: every Part is built over the TP group
            return self.data


    class Mixed:
        def __init__(self, tensor, group):
            self.group = group
            self.data = tensor

        def full(self, parallel):
            if parallel.pp_rank == 0:
                dist.all_reduce(self.data, group=self.group)          # INVALID: built over TP and over PP
            return self.data


    class Staged:
        def __init__(self, tensor, group):
            self.group = group
            self.data = tensor

        @classmethod
        def from_meta(cls, data, group):
            return cls(data, group=group)

        def full(self, parallel):
            if parallel.pp_rank == 0:
                dist.all_reduce(self.data, group=self.group)          # INVALID: its classmethod is handed the PP group
            return self.data


    class Dispatched:
        def __init__(self, tensor, group):
            self.group = group
            self.data = tensor

        def full(self, parallel):
            if parallel.pp_rank == 0:
                dist.all_reduce(self.data, group=self.group)          # INVALID: a dispatcher hands the class out
            return self.data


    class Registered:
        def __init__(self, tensor, group):
            self.group = group
            self.data = tensor

        def full(self, parallel):
            if parallel.pp_rank == 0:
                dist.all_reduce(self.data, group=self.group)          # INVALID: a module table holds the class
            return self.data


    class Regrouped:
        def __init__(self, tensor, group):
            self.group = group
            self.data = tensor

        def move(self, group):
            self.group = group

        def full(self, parallel):
            if parallel.pp_rank == 0:
                dist.all_reduce(self.data, group=self.group)          # INVALID: a method sets the field again
            return self.data
"""

ENGINE = """
    import torch.distributed as dist

    from parts import Dispatched, Mixed, Part, Registered, Regrouped, Staged

    IMPLS = {"registered": Registered}


    def pick_impl():
        return Dispatched


    class Engine:
        def __init__(self, parallel):
            self.parallel = parallel
            dist.barrier()

        def send(self, t):
            return Part(t, group=self.parallel.tp_group.cpu_group).full(self.parallel)

        def recv(self, meta, t):
            return Part.from_meta(meta, t, group=self.parallel.tp_group.cpu_group).full(self.parallel)

        def is_part(self, t):
            return isinstance(t, (Part, Mixed))          # a type test hands no class out

        def mixed(self, t, u):
            a = Mixed(t, group=self.parallel.tp_group.cpu_group)
            b = Mixed(u, group=self.parallel.pp_group.cpu_group)
            return a.full(self.parallel), b.full(self.parallel)

        def staged(self, t, u):
            a = Staged(t, group=self.parallel.tp_group.cpu_group)
            b = Staged.from_meta(u, group=self.parallel.pp_group.cpu_group)
            return a.full(self.parallel), b.full(self.parallel)

        def dispatched(self, t, u):
            a = Dispatched(t, group=self.parallel.tp_group.cpu_group)
            impl = pick_impl()
            b = impl(u, group=self.parallel.pp_group.cpu_group)
            return a.full(self.parallel), b.full(self.parallel), isinstance(b, Dispatched)

        def registered(self, t, u):
            a = Registered(t, group=self.parallel.tp_group.cpu_group)
            b = IMPLS["registered"](u, group=self.parallel.pp_group.cpu_group)
            return a.full(self.parallel), b.full(self.parallel)

        def regrouped(self, t):
            r = Regrouped(t, group=self.parallel.tp_group.cpu_group)
            r.move(self.parallel.tp_group.cpu_group)
            return r.full(self.parallel)
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_a_field_every_construction_builds_over_one_group_is_that_group(tmp_path):
    parts = textwrap.dedent(PARTS)
    (tmp_path / "parts.py").write_text(parts)
    (tmp_path / "engine.py").write_text(textwrap.dedent(ENGINE))
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.path.endswith("parts.py")})
    assert flagged == _marked(parts, "INVALID")
    assert _marked(parts, "VALID")

