"""A record class whose library base makes its ``__init__`` from its annotated
fields (``msgspec.Struct``, ``pydantic.BaseModel``) is read field by field, as
a dataclass is (issue 14, object-taint-spread).

An encoder prepares one context object per batch: the request's own flags
beside a list of cache keys only the first rank computes.  Built with keywords
(or by position), each argument reaches its own field, so a test of the flag the
caller passed is the same on every rank, while a test of the keys, or a method
of the record reading its own field, still differs.  Before, a call of such a
class ran no function of the tree: its result was every argument at once."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site").findings]


_ENCODER = """
    import msgspec
    import pydantic
    import torch.distributed as dist


    class {cls}:
        req_id: str
        keys: list
        use_cache: bool = False

        def pending(self):
            return self.keys is not None


    class Encoder:
        def __init__(self):
            self.rank = dist.get_rank()

        def prepare(self, req_id, use_cache):
            keys = None
            if self.rank == 0:
                keys = [req_id]
            return Context({args})

        def encode(self, req_id, use_cache, t):
            ctx = {made}
            if {test}:
                dist.broadcast(t, src=0)
"""

_KEYWORDS = "req_id=req_id, keys=keys, use_cache=use_cache"


def _encoder(cls="Context(msgspec.Struct, frozen=True)", args=_KEYWORDS, test="ctx.use_cache",
             made="self.prepare(req_id, use_cache)"):
    return _ENCODER.replace("{cls}", cls).replace("{args}", args).replace("{test}", test).replace("{made}", made)


def test_a_field_of_a_struct_holds_its_own_argument_alone():
    assert _codes(_encoder()) == []


def test_a_field_given_by_position_holds_its_own_argument_alone():
    assert _codes(_encoder(args="req_id, keys, use_cache")) == []


def test_a_field_of_a_pydantic_model_holds_its_own_argument_alone():
    assert _codes(_encoder(cls="Context(pydantic.BaseModel)")) == []


def test_a_field_a_rank_test_decides_still_differs():
    made = "Context(req_id=req_id, keys=[req_id] if self.rank == 0 else None, use_cache=use_cache)"
    assert _codes(_encoder(test="ctx.keys is not None", made=made)) == [("CSL101", 29)]


def test_a_method_of_the_record_reads_the_field_it_was_given():
    assert _codes(_encoder(test="ctx.pending()")) == [("CSL101", 29)]


def test_a_class_of_another_base_keeps_every_argument():
    assert _codes(_encoder(cls="Context(Record)")) == [("CSL101", 29)]


def test_a_field_of_a_record_a_method_hands_back_holds_what_it_was_given():
    # ``prepare`` builds the record and returns it: reading its field through
    # the caller's name reads what the field was given, the rank-0-only keys
    assert _codes(_encoder(test="ctx.keys is not None")) == [("CSL101", 29)]


def _dataclass_encoder(test):
    source = _encoder(cls="Context", test=test).replace(
        "\n    class Context", "\n    @dataclasses.dataclass\n    class Context")
    return source.replace("\n    import msgspec", "\n    import dataclasses\n    import msgspec")


def test_a_field_of_a_dataclass_a_method_hands_back_holds_what_it_was_given():
    assert _codes(_dataclass_encoder("ctx.keys is not None")) == [("CSL101", 31)]


def test_the_flag_of_a_dataclass_a_method_hands_back_is_the_callers_own():
    assert _codes(_dataclass_encoder("ctx.use_cache")) == []
