"""A function declared to hand back a device (``-> torch.device``) that returns
a call the analysis cannot follow hands back a place, whatever the call asks to
make it: the index this rank picked, or a platform object's answer for this
rank's id.  What
it was made from is held inside it, as in ``torch.device(f"cuda:{local_rank}")``
(cslint/analysis/vocabulary.py PLACE_CLASSES, evaluator._held), so a
communicator built on it and comparing a tensor's device with its own does not
differ between ranks.  Without the declaration the unresolved call's result is
the rank itself, and a read of the device's index still differs."""

import textwrap

import pytest

from cslint.api import check_paths

_SOURCE = """
    import torch
    import torch.distributed as dist

    from accel import platform


    def on_gpu():
        return torch.cuda.is_available()


    def own_device(local_rank: int) -> {returns}:
        if on_gpu():
            return torch.device(f"cuda:{{local_rank}}")
        return platform.device_for(local_rank)


    class Comm:
        def __init__(self, device):
            self.device = device

        def takes(self, inp):
            if {test}:
                return False
            return True

        def reduce(self, inp):
            if not self.takes(inp):
                return None
            dist.all_reduce(inp)
            return inp


    class Coordinator:
        def __init__(self, local_rank):
            self.device = own_device(local_rank)
            self.comm = Comm(self.device)

        def step(self, x):
            return self.comm.reduce(x)


    def main():
        Coordinator(dist.get_rank()).step(torch.ones(1))
"""


def _found(tmp_path, returns: str, test: str) -> list:
    path = tmp_path / "coordinator.py"
    path.write_text(textwrap.dedent(_SOURCE).format(returns=returns, test=test))
    return sorted((f.code, f.line) for f in check_paths([str(path)], report="per-site").findings)


#: the line of the collective the early `return None` skips
_REDUCE = next(i for i, line in enumerate(textwrap.dedent(_SOURCE).splitlines(), 1) if "dist.all_reduce(inp)" in line)


def test_a_declared_device_is_a_place_on_every_rank(tmp_path):
    # VALID: `own_device` is declared to return a device; the platform's answer for this rank's id is
    # a device on every rank, so comparing the input's device with it decides alike
    assert _found(tmp_path, "torch.device", "inp.device != self.device") == []


def test_a_device_declared_in_a_string_annotation_is_one_too(tmp_path):
    # VALID: the same declaration written as a forward reference
    assert _found(tmp_path, '"torch.device"', "inp.device != self.device") == []


def test_an_undeclared_device_function_still_hands_back_the_rank(tmp_path):
    # HAZARD: without the declaration the unresolved platform call hands back what it was given, the rank
    assert _found(tmp_path, "object", "inp.device != self.device") == [("CSL102", _REDUCE)]


def test_an_optional_device_still_differs(tmp_path):
    # HAZARD: `Optional[torch.device]` may be None on some ranks: not a place on every rank
    assert _found(tmp_path, "'Optional[torch.device]'", "inp.device != self.device") == [("CSL102", _REDUCE)]


def test_the_index_of_a_declared_device_still_differs(tmp_path):
    # HAZARD: the index is the rank's own, read back from the device
    assert _found(tmp_path, "torch.device", "self.device.index != 0") == [("CSL102", _REDUCE)]


# A declaration says the result is a device, not which one nor that it is never None: a device a
# function of the tree picks per rank, or None the annotation does not rule out, still differs.  Only
# a returned call the pass cannot follow is held as a place; the tests choosing the return keep what
# they decide of its contents.  Each source below calls `dist.all_reduce(x)` under such a test.

_PICKED_PER_RANK = {
    "str_of_picked": """
        def get_dev() -> torch.device:
            if dist.get_rank() == 0:
                return torch.device("cpu")
            return torch.device("cuda")


        def step(x):
            if str(get_dev()) == "cpu":
                dist.all_reduce(x)
    """,
    "picked_equals_device": """
        def get_dev() -> torch.device:
            if dist.get_rank() == 0:
                return torch.device("cpu")
            return torch.device("cuda")


        def step(x):
            if get_dev() == torch.device("cpu"):
                dist.all_reduce(x)
    """,
    "picked_by_device_count": """
        def pick_device(rank: int) -> torch.device:
            if rank < torch.cuda.device_count():
                return torch.device(f"cuda:{rank}")
            return torch.device("cpu")


        def step(x):
            dev = pick_device(dist.get_rank())
            if str(dev) != "cpu":
                dist.all_reduce(x)
    """,
    "picked_in_fstring": """
        def pick_device(rank: int) -> torch.device:
            if rank == 0:
                return torch.device("cpu")
            return torch.device("cuda", rank)


        def step(x):
            dev = pick_device(dist.get_rank())
            if f"{dev}" == "cpu":
                dist.all_reduce(x)
    """,
    "picked_in_tuple": """
        def pick_device(rank: int) -> torch.device:
            if rank == 0:
                return torch.device("cpu")
            return torch.device("cuda")


        def step(x):
            if pick_device(dist.get_rank()) in (torch.device("cpu"),):
                dist.all_reduce(x)
    """,
    "none_in_a_local": """
        def get_dev() -> torch.device:
            dev = None
            if dist.get_rank() == 0:
                dev = torch.device("cuda")
            return dev


        def step(x):
            if get_dev() is None:
                dist.all_reduce(x)
    """,
    "none_from_a_tree_helper": """
        def maybe_dev():
            if dist.get_rank() == 0:
                return None
            return torch.device("cuda")


        def get_dev() -> torch.device:
            return maybe_dev()


        def step(x):
            if get_dev() is None:
                dist.all_reduce(x)
    """,
    "accessor_of_a_picked_field": """
        class Worker:
            def __init__(self):
                self._dev = torch.device("cpu") if dist.get_rank() == 0 else torch.device("cuda")

            def device(self) -> torch.device:
                return self._dev

            def step(self, x):
                if str(self.device()) == "cpu":
                    dist.all_reduce(x)
    """,
    "accessor_of_a_none_field": """
        class Worker:
            def __init__(self):
                self._dev = None
                if dist.get_rank() == 0:
                    self._dev = torch.device("cuda")

            def device(self) -> torch.device:
                return self._dev

            def step(self, x):
                if self.device() is None:
                    dist.all_reduce(x)
    """,
    "local_picked_by_ifexp": """
        def pick() -> torch.device:
            dev = torch.device("cpu") if dist.get_rank() == 0 else torch.device("cuda")
            return dev


        def step(x):
            if pick() == torch.device("cpu"):
                dist.all_reduce(x)
    """,
    # a method of a class of the tree reached through a field or a typed parameter: the whole-tree
    # pass resolves it (evaluator.receiver_of_tree), so its None comes back
    "none_from_a_field_method": """
        class Helper:
            def get(self):
                if dist.get_rank() == 0:
                    return None
                return torch.device("cuda")


        class Worker:
            def __init__(self):
                self.helper = Helper()

            def device(self) -> torch.device:
                return self.helper.get()

            def step(self, x):
                if self.device() is None:
                    dist.all_reduce(x)
    """,
    "none_from_a_typed_method": """
        class Helper:
            def get(self):
                if dist.get_rank() == 0:
                    return None
                return torch.device("cuda")


        def device_of(helper: Helper) -> torch.device:
            return helper.get()


        def step(x):
            if device_of(Helper()) is None:
                dist.all_reduce(x)
    """,
}


@pytest.mark.parametrize("name", sorted(_PICKED_PER_RANK))
def test_a_declared_device_picked_per_rank_still_differs(tmp_path, name):
    # HAZARD: each collective runs on some ranks only
    source = "import torch\nimport torch.distributed as dist\n\n\n" + textwrap.dedent(_PICKED_PER_RANK[name])
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "dist.all_reduce(x)" in text)
    found = sorted((f.code, f.line) for f in check_paths([str(path)], report="per-site").findings)
    assert found == [("CSL101", line)]
