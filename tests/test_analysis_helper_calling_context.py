"""A helper that reaches no collective, called under a rank test, runs
everything it calls only on those ranks (issue 14, recall).  A method the
helper calls that sets a field sets it on those ranks alone, whether or not
the helper's call hands it anything that differs, and whether or not it
hands it arguments at all; a later test of the field before a collective
then differs.  Each INVALID shape sits beside the VALID one where every rank
calls the helper."""

import textwrap

from source_findings import codes

_BUFFER = """
    import torch
    import torch.distributed as dist


    class Buffer:
        def __init__(self, group):
            self.group = group
            self.data = None

        def init_data(self, device):
            self.data = torch.zeros(4, device=device)

        def init_default(self):
            self.data = torch.zeros(4)

        def check(self, t):
            if self.data is None:
                return
            dist.all_reduce(t, group=self.group)
"""


def _line_of(source: str, text: str) -> int:
    lines = textwrap.dedent(source).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def _source(helper_body: str, guarded: bool) -> str:
    head = _BUFFER + f"""

    def fill(buf: Buffer):
        {helper_body}


    def run(buf: Buffer, t):
"""
    if guarded:
        return head + """        if dist.get_rank() == 0:
            fill(buf)
        buf.check(t)
"""
    return head + """        fill(buf)
        buf.check(t)
"""


def test_invalid_helper_passing_a_constant_under_a_rank_test():
    source = _source('buf.init_data("cuda")', guarded=True)
    assert codes(source) == [("CSL102", _line_of(source, "dist.all_reduce"))]


def test_invalid_helper_calling_with_no_arguments_under_a_rank_test():
    source = _source("buf.init_default()", guarded=True)
    assert codes(source) == [("CSL102", _line_of(source, "dist.all_reduce"))]


def test_invalid_two_helpers_deep_under_a_rank_test():
    source = _source('buf.init_data("cuda")', guarded=True).replace(
        "def fill(buf: Buffer):", "def fill(buf: Buffer):\n        prepare(buf)\n\n\n    def prepare(buf: Buffer):")
    assert codes(source) == [("CSL102", _line_of(source, "dist.all_reduce"))]


def test_valid_every_rank_calls_the_helper():
    assert codes(_source('buf.init_data("cuda")', guarded=False)) == []
    assert codes(_source("buf.init_default()", guarded=False)) == []


_STATE = """
    import torch
    import torch.distributed as dist


    class State:
        _shared = {}

        def __init__(self, cpu=False):
            self.__dict__ = self._shared
            if not self.initialized:
                self.set_device()

        @property
        def initialized(self):
            return self._shared != {}

        def set_device(self):
            self.device = torch.device("cuda")


    def log(message):
        if dist.get_rank() == 0:
            State()
            print(message)
        dist.barrier()


    def gather(t):
        if State().device.type == "cuda":
            dist.all_reduce(t)
"""


def test_valid_a_constructor_built_on_some_ranks_sets_its_own_fields_through_self():
    # the object exists only where it was built: what its constructor sets
    # through its own methods carries no calling condition (as its own stores)
    assert codes(_STATE) == []
