"""A function that opens by asserting a group has one rank runs only where
it has one (issue 14): a group's size is the same on every rank, so where
the pipeline group has several ranks every rank raises at
``assert self.pp_group.world_size == 1`` and none reaches what follows.  A
stage test reaching the function's guards through what its caller hands it
(the first stage embeds the tokens, the others take the received hidden
states) decides nothing there (``FuncFacts.asserted_single_groups``,
``processes.asserted_single_rank``).  Without the assert, or with it after
the collective, the finding stays."""

import textwrap

from cslint.api import check_paths

_MODEL = """
    import torch.distributed as dist


    class Model:
        def __init__(self, pp_group, embed):
            self.pp_group = pp_group
            self.embed = embed

        def forward(self, ids, received):
            if self.pp_group.is_first_rank:
                hidden = self.embed(ids)
            else:
                hidden = received["hidden"]
            return self.layers(hidden)

        def layers(self, hidden):
            ASSERT
            if hidden.shape[0] > 0:
                dist.all_reduce(hidden)
            return hidden
"""


def _lines(tmp_path, model: str) -> list:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(textwrap.dedent(model))
    return sorted(f.line for f in check_paths([str(package)], report="per-site").findings
                  if f.path.endswith("model.py"))


def test_a_function_asserting_one_stage_sees_no_stage_difference(tmp_path):
    model = _MODEL.replace("ASSERT", '"""One stage only."""\n            assert self.pp_group.world_size == 1, "not wired"')
    assert _lines(tmp_path, model) == []


def test_without_the_assert_the_stage_test_still_decides(tmp_path):
    assert _lines(tmp_path, _MODEL.replace("ASSERT", "pass")) == [20]


def test_an_assert_after_other_statements_is_not_read(tmp_path):
    model = _MODEL.replace("ASSERT", "hidden = hidden + 0\n            assert self.pp_group.world_size == 1")
    assert _lines(tmp_path, model) == [21]


def test_an_assert_on_another_group_keeps_the_stage_finding(tmp_path):
    model = _MODEL.replace("ASSERT", "assert self.tp_group.world_size == 1")
    assert _lines(tmp_path, model) == [20]
