"""A method reached through a field or a typed receiver that may be a class
of the tree (``evaluator.receiver_of_tree``) keeps its arguments bound past
the nesting limit of call results, as a function of another module does
(issue 14): what a helper object agrees before returning stays agreed, while
a method of the same helper that only hands its arguments back still carries
them, and so does a field that only ever holds a library object."""

import textwrap

from cslint.api import check_paths

HELPER = """
    import torch.distributed as dist


    class Sharer:
        def __init__(self, group):
            self.tp_group = group

        def share(self, reqs, extra):
            box = [reqs + extra]
            dist.broadcast_object_list(box, src=0, group=self.tp_group)
            return box[0]

        def local(self, reqs, extra):
            return reqs + extra
"""

RECEIVER = """
    import time
    import torch.distributed as dist

    from .sharing import Sharer


    class Receiver:
        def __init__(self, group, source):
            self.tp_group = group
            self.source = source
            self.sharer = Sharer(group)
            self.seen = {}

        def _pull(self):
            return self.source.poll()

        def _filter(self, reqs):
            return [r for r in reqs if r is not None]

        def _post(self, reqs):
            return list(reqs)

        def receive(self, extra):
            reqs = self._pull()
            reqs = self._filter(reqs)
            reqs = self.sharer.share(reqs, extra)
            reqs = self._post(reqs)
            return reqs

        def receive_typed(self, sharer: Sharer, extra):
            reqs = self._pull()
            reqs = self._filter(reqs)
            reqs = sharer.share(reqs, extra)
            reqs = self._post(reqs)
            return reqs

        def receive_local(self, extra):
            reqs = self._pull()
            reqs = self._filter(reqs)
            reqs = self.sharer.local(reqs, extra)
            reqs = self._post(reqs)
            return reqs

        def receive_library(self, extra):
            reqs = self._pull()
            reqs = self._filter(reqs)
            reqs = self.seen.get(reqs, extra)
            reqs = self._post(reqs)
            return reqs

        def step(self, tensor):
            late = [time.monotonic()]
            reqs = self.receive(late)
            if reqs:
                dist.all_reduce(tensor, group=self.tp_group)          # VALID: the helper's broadcast agrees it

        def step_typed(self, tensor):
            late = [time.monotonic()]
            reqs = self.receive_typed(self.sharer, late)
            if reqs:
                dist.all_reduce(tensor, group=self.tp_group)          # VALID: the typed helper's broadcast agrees it

        def step_local(self, tensor):
            late = [time.monotonic()]
            reqs = self.receive_local(late)
            if reqs:
                dist.all_reduce(tensor, group=self.tp_group)          # INVALID: this rank's clock handed back

        def step_library(self, tensor):
            late = [time.monotonic()]
            reqs = self.receive_library(late)
            if reqs:
                dist.all_reduce(tensor, group=self.tp_group)          # INVALID: a dict's default is the clock
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def test_a_helper_objects_method_keeps_its_arguments_bound_past_the_nesting_limit(tmp_path):
    # in a package, as real code is: a file in none resolves any name in the tree
    package = tmp_path / "serving"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "sharing.py").write_text(textwrap.dedent(HELPER))
    source = textwrap.dedent(RECEIVER)
    (package / "receiver.py").write_text(source)
    findings = check_paths([str(package)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.path.endswith("receiver.py")})
    assert len(_marked(source, "VALID")) == 2
    assert flagged == _marked(source, "INVALID")
