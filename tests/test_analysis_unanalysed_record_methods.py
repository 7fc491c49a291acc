"""A method of a class whose module the run does not analyse (the prefilter
found no collective in it), called through a field that holds an object of
it, is read as its receiver and its arguments (issue 14, object-taint-spread;
a known limit, recorded here by strict xfails).

A dispatcher keeps a validator record it builds with a length limit and one
more field, and drops a request the validator rejects before it queues it; a
queue that is not empty then decides a collective.  Where the validator's
module also holds a collective (so it is analysed), the record is read field
by field: a rejection that tests only the limit is the same on every rank,
and one that tests a field built from the rank differs.  Where the validator's
module holds none, the method is not resolved: its result is the record as a
whole, every constructor argument at once.  So a rank-local value stored in
a field the method never reads decides the rejection (a false positive; seen
in SGLang's scheduler, whose beam-search coordinator carries the overlap
future map it never reads into each request's validation), and a rank id the
method does test is only held by the record and decides nothing (a false
negative).  The controls run the same shapes with the validator analysed."""

import pytest

from cslint.api import check_paths

_VALIDATOR = """\
import msgspec


class Validator(msgspec.Struct, kw_only=True):
    limit: int
    extra: object

    def reject(self, req):
        if len(req) > self.limit{own_test}:
            return "too long"
        return None
"""

#: appended to the validator's module: any collective makes the prefilter keep it
_ANALYSED = """

def flush(t):
    import torch.distributed as dist
    dist.all_reduce(t)
"""

_DISPATCHER = """\
import torch.distributed as dist

from pkg.checks.validator import Validator


class Dispatcher:
    def __init__(self, limit, factory):
        self.limit = limit
        self.helper = None
        if dist.get_rank() == 0:
            self.helper = object()
        self.extra = {extra}
        self.validator = Validator(limit=self.limit, extra=self.extra)
        self.queue = []

    def admit(self, req):
        if self.validator.reject(req):
            return
        self.queue.append(req)

    def step(self, reqs, t):
        for req in reqs:
            self.admit(req)
        if self.queue:
            dist.all_reduce(t)
"""

#: a rank-local value the validator stores and never reads
_UNREAD = 'factory.make(needs=getattr(self.helper, "lens", None))'
#: the rank itself, which the validator's own test reads
_RANK = "dist.get_rank()"


def _findings(tmp_path, extra, own_test="", analysed=False):
    package = tmp_path / "pkg"
    (package / "checks").mkdir(parents=True)
    (package / "serve").mkdir()
    for folder in (package, package / "checks", package / "serve"):
        (folder / "__init__.py").write_text("")
    validator = _VALIDATOR.format(own_test=own_test) + (_ANALYSED if analysed else "")
    (package / "checks" / "validator.py").write_text(validator)
    (package / "serve" / "dispatcher.py").write_text(_DISPATCHER.format(extra=extra))
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return sorted((f.code, f.path.rsplit("/", 1)[-1], f.line) for f in findings)


def test_an_analysed_validator_reads_only_the_field_it_tests(tmp_path):
    assert _findings(tmp_path, _UNREAD, analysed=True) == []


def test_an_analysed_validator_testing_the_rank_differs(tmp_path):
    found = _findings(tmp_path, _RANK, own_test=" or self.extra == 0", analysed=True)
    assert found == [("CSL101", "dispatcher.py", 25)]


@pytest.mark.xfail(strict=True, reason="a method of a class of an unanalysed module, called through a field, is "
                                       "read as its receiver: every constructor argument decides its result")
def test_an_unanalysed_validator_reads_only_the_field_it_tests(tmp_path):
    assert _findings(tmp_path, _UNREAD) == []


@pytest.mark.xfail(strict=True, reason="a method of a class of an unanalysed module, called through a field, is "
                                       "read as its receiver: a rank id the record only holds decides nothing")
def test_an_unanalysed_validator_testing_the_rank_differs(tmp_path):
    assert _findings(tmp_path, _RANK, own_test=" or self.extra == 0") == [("CSL101", "dispatcher.py", 25)]
