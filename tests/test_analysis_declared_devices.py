"""A function declared to hand back a device (``-> torch.device``) hands back a
place, whatever it asks to make it: the index this rank picked, or a platform
object's answer for this rank's id (a call the analysis cannot follow).  What
it was made from is held inside it, as in ``torch.device(f"cuda:{local_rank}")``
(cslint/analysis/vocabulary.py PLACE_CLASSES, evaluator._held), so a
communicator built on it and comparing a tensor's device with its own does not
differ between ranks.  Without the declaration the unresolved call's result is
the rank itself, and a read of the device's index still differs."""

import textwrap

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
