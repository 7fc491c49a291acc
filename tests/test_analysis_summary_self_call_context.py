"""A summarised method called under a rank test runs what it calls on
``self`` on those ranks only, as it runs its other calls
(``callercontext.pass_calling_context``): a method it calls on ``self``
that sets a field sets it on those ranks alone, whatever it is handed
(nothing, a constant).  ``if dist.get_rank() == 0: self._maybe()`` with
``_maybe`` calling ``self._set()``, which sets ``self.flag = 1``, makes
``if self.flag: dist.all_reduce(t)`` differ between ranks (reviewB54
fx/bare b2; a1, a3, a5: the same call under a test of the summary's own,
two summaries deep, a summary returning a value).  Without a rank test
on the way, or where the field the collective tests is another, nothing
is reported; nor where the summary is a constructor: the object it makes
exists only on the ranks that made it, and an object every rank makes
sets its fields on every rank (``callercontext.hands_context_to``)."""

import textwrap

import pytest

from cslint.api import check_source


def _findings(source: str) -> list:
    return sorted((f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site").findings)


_HEAD = """
    import torch.distributed as dist


    class W:
        def __init__(self):
            self.flag = 0
            self.other = 0

        def _set(self):
            self.flag = 1
"""

REPORTED = {
    "a_bare_call_of_a_summary": """
        def _maybe(self):
            self._set()

        def step(self, t):
            if dist.get_rank() == 0:
                self._maybe()
            if self.flag:
                dist.all_reduce(t)
    """,
    "under_a_test_of_the_summary": """
        def _maybe(self, n):
            if n > 0:
                self._set()

        def step(self, t, n):
            if dist.get_rank() == 0:
                self._maybe(n)
            if self.flag:
                dist.all_reduce(t)
    """,
    "two_summaries_deep": """
        def _maybe(self, n):
            if n > 0:
                self._set()

        def _outer(self, n):
            self._maybe(n)

        def step(self, t, n):
            if dist.get_rank() == 0:
                self._outer(n)
            if self.flag:
                dist.all_reduce(t)
    """,
    "a_summary_returning_a_value": """
        def _maybe(self, n):
            if n > 0:
                self._set()
            return n

        def step(self, t, n):
            if dist.get_rank() == 0:
                self._maybe(n)
            dist.barrier()
            if self.flag:
                dist.all_reduce(t)
    """,
}

QUIET = {
    "called_on_every_rank": """
        def _maybe(self):
            self._set()

        def step(self, t):
            self._maybe()
            if self.flag:
                dist.all_reduce(t)
    """,
    "another_field_tested": """
        def _maybe(self):
            self._set()

        def step(self, t):
            if dist.get_rank() == 0:
                self._maybe()
            if self.other:
                dist.all_reduce(t)
    """,
}


_BUILT = """
    import torch.distributed as dist


    class State:
        def __init__(self):
            self._setup()

        def _setup(self):
            self.kind = "cuda"


    def save():
        if dist.get_rank() == 0:
            State()


    def gather(t):
        if State().kind == "neuron":
            dist.all_reduce(t)
"""


def test_an_object_a_constructor_sets_up_on_some_ranks_leaves_another_objects_field_alone():
    # the State() of gather is made on every rank and set up there: its kind is every rank's
    assert _findings(_BUILT) == []


def test_a_field_a_method_sets_up_again_on_some_ranks_is_reported():
    # the same set-up run again by a method (no constructor) of the object every rank holds, on rank 0 alone
    source = """
        import torch.distributed as dist


        class State:
            def __init__(self):
                self.kind = "cuda"

            def reset(self):
                self._setup()

            def _setup(self):
                self.kind = "neuron"

            def save(self):
                if dist.get_rank() == 0:
                    self.reset()

            def gather(self, t):
                if self.kind == "neuron":
                    dist.all_reduce(t)
    """
    assert "CSL101" in [code for code, _line in _findings(source)]


def _class(body: str) -> str:
    return textwrap.dedent(_HEAD) + textwrap.indent(textwrap.dedent(body), "    ")


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_a_field_set_through_a_summarys_call_on_self_under_a_rank_test_is_reported(name):
    assert "CSL101" in [code for code, _line in _findings(_class(REPORTED[name]))]


@pytest.mark.parametrize("name", sorted(QUIET))
def test_a_field_set_on_every_rank_or_another_field_stays_quiet(name):
    assert _findings(_class(QUIET[name])) == []
