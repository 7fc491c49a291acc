"""A handler naming an exception class its package defines in another
module (issue 14, uniform-exception: Megatron-core's MoE layer catches the
partial CUDA-graph capture signal, a class of its ``moe_utils`` module).

``except E`` catches an instance of ``E`` or of a subclass, nothing else:
a class of the project's own package is never raised by a library, a
builtin or this rank's local work, only by the project's own ``raise``
statements.  A handler that names only such classes is decided by what
decides those statements (``raises.own_classes_only``, the ``T`` atoms);
before, only the classes of the handler's own file counted, so a handler
naming an imported one read every local failure of its ``try`` body.
Each VALID shape sits beside the INVALID one that must still be reported."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

SIGNALS = """
    class EarlyReturn(Exception):
        def __init__(self, outputs):
            super().__init__("early return")
            self.outputs = outputs


    def stop_after(stage, scope, outputs):
        if stage in scope:
            raise EarlyReturn(outputs)
"""

LAYER = """
    import torch
    import torch.distributed as dist

    from pkg.util.signals import EarlyReturn, stop_after


    class Block:
        def __init__(self, scope, group, limit, table):
            self.scope = scope
            self.group = group
            self.limit = limit
            self.table = table

        def _route(self, x):
            with open(self.table) as handle:
                weights = torch.tensor([float(v) for v in handle.read().split()])
            y = torch.nn.functional.softmax(x * weights, dim=-1)
            stop_after("route", self.scope, y)
            return y

        def _route_tight(self, x):
            y = torch.nn.functional.softmax(x, dim=-1)
            if torch.cuda.memory_allocated() > self.limit:
                raise EarlyReturn(y)
            return y

        def forward(self, x):
            try:
                y = self._route(x)
            except EarlyReturn as signal:
                return signal.outputs
            dist.all_reduce(y, group=self.group)          # VALID: the configured scope decides
            return y

        def forward_tight(self, x):
            try:
                y = self._route_tight(x)
            except EarlyReturn as signal:
                return signal.outputs
            dist.all_reduce(y, group=self.group)          # INVALID: this rank's memory decides
            return y

        def forward_any(self, x):
            try:
                y = self._route(x)
            except (EarlyReturn, RuntimeError):
                return x
            dist.all_reduce(y, group=self.group)          # INVALID: a failed read is caught too
            return y
"""


def _marked(source: str, word: str) -> list:
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def _flagged(tmp_path, layer: str, namespace: str = "") -> list:
    root = tmp_path / namespace / "pkg" if namespace else tmp_path / "pkg"
    (root / "util").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "util" / "__init__.py").write_text("")
    (root / "util" / "signals.py").write_text(textwrap.dedent(SIGNALS))
    (root / "layer.py").write_text(layer)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return sorted({f.line for f in findings if f.path.endswith("layer.py")})


def test_a_handler_of_a_class_the_package_defines_elsewhere_reads_only_its_raises(tmp_path):
    source = textwrap.dedent(LAYER)
    assert _marked(source, "INVALID") and _marked(source, "VALID")
    assert _flagged(tmp_path, source) == _marked(source, "INVALID")


def test_a_class_from_another_package_may_be_what_a_library_raises(tmp_path):
    # the same class reached from outside the package: a library's class may
    # come out of any local failure, so the VALID site is reported too
    source = textwrap.dedent(LAYER).replace("from pkg.util.signals import", "from outside.signals import")
    flagged = _flagged(tmp_path, source)
    assert set(_marked(source, "VALID")) <= set(flagged)


def test_a_class_of_the_package_reached_through_its_namespace_folder(tmp_path):
    # the package sits in a folder with no __init__.py (a namespace package),
    # its modules named from the package down, its imports from the folder
    source = textwrap.dedent(LAYER).replace("from pkg.util.signals import", "from outer.pkg.util.signals import")
    assert _flagged(tmp_path, source, namespace="outer") == _marked(source, "INVALID")
