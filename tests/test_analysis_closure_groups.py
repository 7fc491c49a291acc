"""The group of a collective a nested function reaches through one of its free variables (issue 12): a
partitioner attaches a closure over itself to each parameter it converts, ``param.gather_all = gather_all``,
whose all-gather runs over the partitioner's ``self.group``.  A later ``param.gather_all()`` in another class's
method runs it over the partitioner's group, not over the caller's own ``self.group`` -- the two spell it alike
but name different objects -- so arms gathering over the caller's group and through the closure do not issue
the same collectives.  A call of the closure by its own name, inside the method that defines it, shares that
method's ``self`` and stays bound as before."""

import textwrap

from cslint.api import check_source


def _findings(source):
    return [(f.code, f.line, f.function) for f in check_source(textwrap.dedent(source)).findings]


_PARTITIONER = """
    import torch.distributed as dist


    class Partitioner:
        def __init__(self, group):
            self.group = group

        def convert(self, param):
            def gather_all():
                dist.all_gather_into_tensor(param, param, group=self.group)

            param.gather_all = gather_all

        def refresh(self, param, rank):
            def gather_all():
                dist.all_gather_into_tensor(param, param, group=self.group)

            if rank == 0:
                dist.all_gather_into_tensor(param, param, group=self.group)
            else:
                gather_all()
            return param
"""


def test_invalid_arms_gathering_over_the_callers_group_and_through_another_objects_closure():
    assert _findings(_PARTITIONER + """

    class Loader:
        def __init__(self, group):
            self.group = group

        def load(self, param, rank):
            if rank == 0:
                dist.all_gather_into_tensor(param, param, group=self.group)
            else:
                param.gather_all()
            return param
    """) == [("CSL101", 32, "Loader.load")]


def test_the_closures_group_is_named_after_the_scope_that_defines_it():
    found = check_source(textwrap.dedent(_PARTITIONER + """

    class Loader:
        def load(self, param, rank):
            if rank == 0:
                return None
            param.gather_all()
            return param
    """)).findings
    assert [(f.code, f.line) for f in found] == [("CSL102", 30)]
    assert "`<Partitioner.convert>.self.group`" in found[0].message


def test_valid_a_closure_called_by_name_in_its_own_method_runs_over_that_methods_group():
    assert _findings(_PARTITIONER) == []
