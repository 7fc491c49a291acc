"""What a file's positional fields cost (``entries.positional_fields``).

They are worked out only where a read may need them: a view of a dict
(``d.items()``) or a loop over one whose value holds no field of the
function's own class reads no element of an appended field
(``entries.element_own``), so nothing is worked out for it.  A loop over the
elements of a field filled by ``append`` still reads them by position: a
length the rank decides there still differs, an agreed one does not.

Once worked out, they are read from the call scans of the file's functions
(``entries.scanned_entry_nodes``) and a walk of what no scan walks
(signatures, class bodies, lambdas, a definition in a loop), not from a
second walk of the whole module: the same stores, assignments and calls,
each once, so the same fields."""

import ast
import collections
import textwrap

import cslint.analysis.scope as scope
from cslint.analysis.astwalk import walked
from cslint.analysis.entries import APPENDED, positional_fields
from cslint.api import check_source


def _checked(source, monkeypatch):
    """(the findings' (code, line), how many files' positional fields were worked out)."""
    walks = []
    real = scope.positional_fields

    def counting(nodes):
        walks.append(nodes)
        return real(nodes)

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


_SPOILT_OUT_OF_SCANS = """
    import dataclasses
    import torch.distributed as dist


    @dataclasses.dataclass
    class Record:
        steps: list = dataclasses.field(default_factory=list)


    class Base(tools.marks.extend(()) or object):
        kept = setup.tables.extend(())

        @registry.loads.extend(())
        def fill(self, x=defaults.loads.extend(())) -> hints.sizes.extend(()):
            return x


    class Planner:
        def __init__(self, group):
            self.group = group
            self.plans = []
            self.tables = []
            self.loads = []
            self.queue = []
            self.waits = []
            self.sizes = []
            self.marks = []
            self.steps = []
            self.hooks = [lambda item: self.queue.extend(item)]
            for _ in range(3):
                def later(waits=self.waits.copy()):
                    waits.extend(())
                    self.waits.extend(())

        def step(self, t):
            self.plans.append(t)
            self.tables.append(t)
            self.loads.append(t)
            self.queue.append(t)
            self.waits.append(t)
            self.sizes.append(t)
            self.marks.append(t)
            self.steps.append(t)
            dist.all_reduce(t, group=self.group)
"""


def _stores_and_calls(nodes) -> collections.Counter:
    """How many times each call, store into or deletion of an attribute or an
    element of one, and one-target assignment to one is among ``nodes``."""
    return collections.Counter(
        id(node) for node in nodes
        if type(node) is ast.Attribute and type(node.ctx) is ast.Store
        or type(node) is ast.Subscript and type(node.ctx) is not ast.Load and type(node.value) is not ast.Name
        or type(node) is ast.Call
        or type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is not ast.Name)


def test_positional_fields_are_read_from_the_scans_not_a_walk_of_the_module(monkeypatch):
    asked = []
    real_nodes, real_walked = scope.scanned_entry_nodes, scope.walked

    def scanned(module_body, functions):
        nodes = real_nodes(module_body, functions)
        asked.append((module_body.func, nodes))
        return nodes

    def walking(node):
        assert type(node) is not ast.Module, "the whole module walked again"
        return real_walked(node)

    monkeypatch.setattr(scope, "scanned_entry_nodes", scanned)
    monkeypatch.setattr(scope, "walked", walking)
    check_source(textwrap.dedent(_SPOILT_OUT_OF_SCANS))
    ((tree, nodes),) = asked
    # each of those of the module once, the dataclass's own __init__ (written from its fields, no
    # part of the tree) left out
    assert _stores_and_calls(nodes) == _stores_and_calls(walked(tree))
    found = positional_fields(nodes)
    assert found == positional_fields(walked(tree))
    # a field filled another way in a class's bases or body, a decorator, a default, an annotation, a lambda or a
    # function defined in a loop is no appended field; the dataclass's made __init__ spoils none
    assert {attr for attr, kind in found.items() if kind == APPENDED} == {"plans", "steps"}
