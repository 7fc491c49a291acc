"""A local written past an early exit, in a function that reaches no
collective itself (issue 14 §2.1): the ranks the exit sent out of the function
never read the local again, so its test does not make the local differ
between the ranks that go on.  The summary walk leaves it out of what such a
local holds (armlocals.ArmLocals), as the dataflow does for a deep function
(bindingflow.BindingFlow.tests_read_alike).  Each VALID shape sits beside the
INVALID one that must still be reported: a field written past the exit, and
the exit itself where the function reaches the collective."""

import textwrap

from cslint.api import check_source


def _findings(source):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), report="per-site").findings)


# a loader that returns early where this rank sees no checkpoint files, then
# hands a parameter list it builds past that test to a context object whose
# exit broadcasts each parameter.  The with-statement runs that __exit__
# (analysis/managed.py), so the early exit skips the broadcast on the ranks
# that saw no files: reported at the skipped call (line 21, the local file
# view); the local's own reading at the broadcast (line 11) stays alike
LOADER = """
    import glob
    import torch.distributed as dist

    class Gather:
        def __init__(self, params):
            self.params = list(params)

        def __exit__(self, *exc):
            for p in self.params:
                dist.broadcast(p, 0)  # line 11

    class Engine:
        def load(self, path):
            names = glob.glob(path)
            if not names:
                return None
            fetch = []
            for module in self.modules():
                fetch.extend(module.experts())
            self.load_module(fetch)
            return names

        def load_module(self, fetch):
            with Gather(fetch):
                self.loaded = True
"""

# the same list bound straight past the exit, with no loop
BOUND_ONLY = LOADER.replace("""            fetch = []
            for module in self.modules():
                fetch.extend(module.experts())
""", """            fetch = [p for p in self.params() if p.sharded]
""")

# the exit inside a try: a handler may catch what it raises, so the ranks it
# holds for may go on and read what follows
RAISED_IN_TRY = LOADER.replace("""            if not names:
                return None
            fetch = []
            for module in self.modules():
                fetch.extend(module.experts())
            self.load_module(fetch)""", """            try:
                if not names:
                    raise FileNotFoundError(path)
                fetch = []
                for module in self.modules():
                    fetch.extend(module.experts())
            except FileNotFoundError:
                fetch = list(names)
            self.load_module(fetch)""")

# past the exit the list is filled from the very files the test looked at: what it holds still differs
FILLED_FROM_FILES = LOADER.replace("""            for module in self.modules():
                fetch.extend(module.experts())""", """            for name in names:
                fetch.append(name)""")

# a field written past the exit: a rank that left keeps what it held before
FIELD_STORE = """
    import glob
    import torch.distributed as dist

    class Engine:
        def load(self, path):
            names = glob.glob(path)
            if not names:
                return None
            fetch = []
            self.fetch = fetch
            return names

        def sync(self):
            for p in self.fetch:
                dist.broadcast(p, 0)  # line 16
"""

# the loader reaches the collective itself: the exit is reported where it skips it
REACHES = LOADER.replace("""            self.load_module(fetch)
            return names""", """            self.load_module(fetch)
            dist.barrier()
            return names""")


def test_local_built_past_an_early_exit_is_alike_where_it_is_read():
    assert _findings(LOADER) == [(21, "CSL102")]  # (11, "CSL103") too without the change


def test_local_bound_past_an_early_exit_is_alike_where_it_is_read():
    assert _findings(BOUND_ONLY) == [(19, "CSL102")]


def test_exit_a_handler_may_catch_still_decides_the_local():
    assert _findings(RAISED_IN_TRY) == [(11, "CSL103")]


def test_local_filled_from_what_the_exit_tested_still_differs():
    assert _findings(FILLED_FROM_FILES) == [(11, "CSL103"), (21, "CSL102")]


def test_field_written_past_an_early_exit_still_differs():
    assert _findings(FIELD_STORE) == [(16, "CSL103")]


def test_exit_skipping_a_collective_is_reported_at_the_exit():
    assert [code for _, code in _findings(REACHES)] == ["CSL102", "CSL102"]  # the barrier and the with's exit
