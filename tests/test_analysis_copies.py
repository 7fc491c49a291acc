"""A name or field rebound on some ranks to a copy of the object it holds
(``analysis/copies.py``): ``dataclasses.replace(x, ...)``,
``msgspec.structs.replace(x, ...)``, ``x._replace(...)``, ``x.to(device)``,
``copy.deepcopy(x)``.  The ranks' test
decides what the object holds, never whether it is there.  Each VALID
shape sits beside the INVALID one that must be reported.
"""

import textwrap

from cslint.api import check_paths

MANAGER = """
    import dataclasses

    import msgspec
    import torch.distributed as dist


    @dataclasses.dataclass(frozen=True)
    class Session:
        selector: str
        loaded: bool = False


    class Updates(msgspec.Struct, frozen=True):
        selector: str
        loaded: bool = False


    def receive(path):
        with open(path, "rb") as f:
            return f.read()


    class WeightUpdater:
        def __init__(self, group):
            self.group = group
            self._session = None

        def begin(self, selector):
            if self._session is not None:
                return False
            self._session = Session(selector)
            dist.barrier(group=self.group)
            return True

        def load(self, path):
            if self._session is None:
                return False
            try:
                weights = receive(path)
            except OSError:
                success = False
            else:
                success = weights is not None
            if success:
                {write}
            return success

        def end(self):
            if self._session is None:
                return False
            self._session = None
            dist.barrier(group=self.group)
            return True
"""


def _findings(tmp_path, write: str):
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(MANAGER).replace("{write}", write))
    return sorted((f.code, f.function) for f in check_paths([str(path)], cache=False).findings)


def test_a_field_replaced_by_its_own_copy_on_some_ranks_is_there_on_every_rank(tmp_path):
    assert _findings(tmp_path, "self._session = dataclasses.replace(self._session, loaded=True)") == []


def test_a_msgspec_struct_copy_keeps_the_field_there_too(tmp_path):
    assert _findings(tmp_path, "self._session = msgspec.structs.replace(self._session, loaded=True)") == []


def test_a_named_tuple_replaced_by_its_own_copy_keeps_the_field_there(tmp_path):
    assert _findings(tmp_path, "self._session = self._session._replace(loaded=True)") == []


def test_a_field_some_ranks_clear_differs_in_presence(tmp_path):
    assert _findings(tmp_path, "self._session = None") == [
        ("CSL102", "WeightUpdater.begin"), ("CSL102", "WeightUpdater.end")]


def test_a_copy_of_another_field_is_no_copy_of_this_one(tmp_path):
    # ``self._pending`` may be None: what some ranks store is not what the
    # field held, so whether it is there differs
    assert _findings(tmp_path, "self._session = self._pending and dataclasses.replace(self._pending)") == [
        ("CSL102", "WeightUpdater.begin"), ("CSL102", "WeightUpdater.end")]


def test_a_local_copied_on_some_ranks_keeps_its_presence(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent("""
        import copy
        import dataclasses

        import torch.distributed as dist


        def step(plan, t, group):
            if dist.get_rank(group) == 0:
                plan = dataclasses.replace(plan, verbose=True)
            if plan is None:
                return
            dist.all_reduce(t, group=group)


        def step_cloned(plan, t, group):
            if dist.get_rank(group) == 0:
                plan = copy.deepcopy(plan)
            if plan is None:
                return
            dist.all_reduce(t, group=group)


        def step_cleared(plan, t, group):
            if dist.get_rank(group) == 0:
                plan = None
            if plan is None:
                return
            dist.all_reduce(t, group=group)
    """))
    found = sorted((f.code, f.function) for f in check_paths([str(path)], cache=False).findings)
    assert found == [("CSL102", "step_cleared")]
