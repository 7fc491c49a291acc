"""What a file's positional fields cost (``entries.positional_fields``: one
walk of the whole module).

They are worked out only where a read may need them: a view of a dict
(``d.items()``) or a loop over one whose value holds no field of the
function's own class reads no element of an appended field
(``entries.element_own``), so nothing is worked out for it.  A loop over the
elements of a field filled by ``append`` still reads them by position: a
length the rank decides there still differs, an agreed one does not."""

import textwrap

import cslint.analysis.scope as scope
from cslint.api import check_source


def _checked(source, monkeypatch):
    """(the findings' (code, line), how many files' positional fields were worked out)."""
    walks = []
    real = scope.positional_fields

    def counting(tree):
        walks.append(tree)
        return real(tree)

    monkeypatch.setattr(scope, "positional_fields", counting)
    findings = check_source(textwrap.dedent(source)).findings
    return [(f.code, f.line) for f in findings], len(walks)


_HANDED_DICT = """
    import torch.distributed as dist


    class Reducer:
        def __init__(self, group):
            self.group = group

        def reduce_all(self, batch):
            for name, tensor in batch.items():
                dist.all_reduce(tensor, group=self.group)
"""


def test_a_view_of_a_dict_holding_no_field_does_not_walk_the_module(monkeypatch):
    assert _checked(_HANDED_DICT, monkeypatch) == ([], 0)


_PLANS = """
    import torch.distributed as dist


    class Planner:
        def _plan_for(self, buf):
            return {buf.kind: [c for c in range({COUNT})]}

        def __init__(self, bufs, group):
            self.group = group
            self.plans = []
            for buf in bufs:
                self.plans.append(self._plan_for(buf))

        def scatter_all(self, out):
            for plan in self.plans:
                for kind, chunks in plan.items():
                    for chunk in chunks:
                        dist.scatter(out, None, 0, group=self.group)
"""


def test_a_loop_over_an_appended_field_still_reads_its_positions(monkeypatch):
    codes, walks = _checked(_PLANS.replace("{COUNT}", "len(buf.chunks)"), monkeypatch)
    assert codes == [] and walks == 1


def test_a_length_the_rank_decides_in_an_appended_field_still_differs(monkeypatch):
    codes, walks = _checked(_PLANS.replace("{COUNT}", "dist.get_rank()"), monkeypatch)
    assert codes == [("CSL103", 19)] and walks == 1
