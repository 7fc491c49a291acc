"""A field read through a parameter (``holder.counts`` in ``def check(holder)``)
is read as the structure of what the callers pass (``atoms.attribute``: a
parameter is not one of the objects whose fields the whole-tree pass looks
up; ``p.attr`` becomes a projection of the parameter), never as the field's
table.  The same read through a local the function built itself
(``h = Holder(...)``, then ``h.counts``) reads the field.  Two consequences,
both pinned here beside controls that keep their verdict (issue 14):

* recall: a field a method writes from the rank, or a constructor stores a
  rank-local list into, differs where a local reads it and not where a
  callee reads it through its parameter (also when the parameter is
  annotated with the class);
* precision: an object a classmethod builds with ``cls(...)`` (a call the
  whole-tree pass does not resolve, so its result is made of every argument
  as passed) takes the structure of what it was built from; a callee two
  calls down testing a field of it reads that structure, whatever the field
  holds (SGLang's ``ForwardBatch.init_new`` building ``ret`` from a batch
  that is a different object on some ranks, then handing ``ret`` to the LoRA
  backend that tests ``forward_batch.global_num_tokens_cpu``).  The same
  code naming the class is clean.  Reading the object as a new one (its
  structure not its arguments') is only sound once a parameter's field reads
  the field: until then the arguments' structure is the only way a callee
  sees what the object's fields hold.
"""

import textwrap

import pytest

from cslint.api import check_paths

_HOLDER = """
    import os

    import torch.distributed as dist


    class Holder:
        def __init__(self, counts, names):
            self.counts = counts
            self.names = names

        def reset(self):
            self.counts = dist.get_rank()


    def check(holder{annotation}):
        if {test}:
            dist.barrier()


    def relay(holder):
        check(holder)


    def start():
        h = Holder(3, {names})
        h.reset()
        {use}
"""


def _findings(tmp_path, source: str) -> list:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "module.py").write_text(textwrap.dedent(source))
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return sorted((f.code, f.line) for f in findings)


def _holder(tmp_path, test="holder.counts == 0", use="relay(h)", names="[]", annotation=""):
    return _findings(tmp_path, _HOLDER.format(test=test, use=use, names=names, annotation=annotation))


# controls: a local reads the field


def test_a_local_reads_the_field_a_method_wrote_from_the_rank(tmp_path):
    found = _holder(tmp_path, use="if h.counts == 0:\n            dist.barrier()")
    assert [code for code, _ in found] == ["CSL101"]


def test_a_local_reads_the_rank_local_list_its_constructor_stored(tmp_path):
    found = _holder(tmp_path, names='os.listdir("/tmp")', use="if h.names:\n            dist.barrier()")
    assert [code for code, _ in found] == ["CSL101"]


def test_a_parameter_whose_callers_pass_a_differing_object_differs(tmp_path):
    # the structure of what is passed still reaches the callee: None on some ranks
    found = _holder(tmp_path, test="holder.names", use='relay(h if os.path.exists("/tmp/x") else None)')
    assert [code for code, _ in found] == ["CSL101"]


# recall gaps: the callee's read of the same field


@pytest.mark.xfail(strict=True, reason="`holder.counts` of a parameter is read as the structure of what the callers "
                                       "pass, never the field `Holder.reset` writes from the rank")
@pytest.mark.parametrize("annotation", ["", ": Holder"])
def test_a_parameter_reads_the_field_a_method_wrote_from_the_rank(tmp_path, annotation):
    assert [code for code, _ in _holder(tmp_path, annotation=annotation)] == ["CSL101"]


@pytest.mark.xfail(strict=True, reason="`holder.names` of a parameter is read as the structure of the object the "
                                       "caller built, never the rank-local list its constructor stored")
def test_a_parameter_reads_the_rank_local_list_its_constructor_stored(tmp_path):
    assert [code for code, _ in _holder(tmp_path, test="holder.names", names='os.listdir("/tmp")')] == ["CSL101"]


# precision gap: an object ``cls(...)`` builds takes the structure of its arguments

_FACTORY = """
    import os

    import torch.distributed as dist


    class Batch:
        def __init__(self, reqs):
            self.reqs = reqs


    class Forward:
        def __init__(self, reqs, counts):
            self.reqs = reqs
            self.counts = counts

        @classmethod
        def build(cls, batch):
            ret = {made}(reqs=batch.reqs, counts={counts})
            relay(ret)
            return ret


    def check(forward):
        counts = forward.counts
        if counts is None:
            return
        dist.barrier()


    def relay(forward):
        check(forward)


    def start():
        if os.path.exists("/tmp/x"):
            batch = Batch(os.listdir("/tmp"))
        else:
            batch = Batch([])
        Forward.build(batch)
"""


def _factory(tmp_path, made="cls", counts="None"):
    return _findings(tmp_path, _FACTORY.format(made=made, counts=counts))


def test_an_object_built_by_naming_its_class_is_one_object_whatever_it_was_built_from(tmp_path):
    assert _factory(tmp_path, made="Forward") == []


@pytest.mark.xfail(strict=True, reason="`cls(...)` in a classmethod is not resolved: its result is every argument as "
                                       "passed, so a callee's `forward.counts` reads which batch it was built from")
def test_an_object_cls_builds_is_one_object_whatever_it_was_built_from(tmp_path):
    assert _factory(tmp_path) == []


def test_a_field_cls_gives_a_value_whose_none_ness_differs_differs(tmp_path):
    # INVALID near-miss: the field itself is None on some ranks only
    found = _factory(tmp_path, counts='None if os.path.exists("/tmp/y") else [1]')
    assert [code for code, _ in found] == ["CSL102"]


@pytest.mark.xfail(strict=True, reason="`forward.counts` of a parameter is read as the structure of the object the "
                                       "caller built, never the value its constructor stored, None on some ranks")
def test_a_field_the_named_class_gives_a_value_whose_none_ness_differs_differs(tmp_path):
    found = _factory(tmp_path, made="Forward", counts='None if os.path.exists("/tmp/y") else [1]')
    assert [code for code, _ in found] == ["CSL102"]
