"""A method the calling class inherits from a base another file defines (a
mixin's agreement helper) keeps its arguments bound past the nesting limit of
call results, as a method of the same file that reaches a collective does
(``results.keeps_arguments_bound``, issue 14): what it agrees before
returning stays agreed, while a mixin method that only hands its arguments
back still carries them."""

import textwrap

from cslint.api import check_paths

MIXIN = """
    import torch.distributed as dist


    class SharingMixin:
        def _share(self, reqs, extra):
            box = [reqs + extra]
            dist.broadcast_object_list(box, src=0, group=self.tp_group)
            return box[0]

        def _local(self, reqs, extra):
            return reqs + extra
"""

RECEIVER = """
    import time
    import torch.distributed as dist

    from sharing import SharingMixin


    class Receiver(SharingMixin):
        def __init__(self, group, source):
            self.tp_group = group
            self.source = source

        def _pull(self):
            return self.source.poll()

        def _filter(self, reqs):
            return [r for r in reqs if r is not None]

        def _post(self, reqs):
            return list(reqs)

        def receive(self, extra):
            reqs = self._pull()
            reqs = self._filter(reqs)
            reqs = self._share(reqs, extra)
            reqs = self._post(reqs)
            return reqs

        def receive_local(self, extra):
            reqs = self._pull()
            reqs = self._filter(reqs)
            reqs = self._local(reqs, extra)
            reqs = self._post(reqs)
            return reqs

        def step(self, tensor):
            late = [time.monotonic()]
            reqs = self.receive(late)
            if reqs:
                dist.all_reduce(tensor, group=self.tp_group)          # VALID: the mixin's broadcast agrees it

        def step_local(self, tensor):
            late = [time.monotonic()]
            reqs = self.receive_local(late)
            if reqs:
                dist.all_reduce(tensor, group=self.tp_group)          # INVALID: this rank's clock handed back
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def test_a_mixin_method_keeps_its_arguments_bound_past_the_nesting_limit(tmp_path):
    (tmp_path / "sharing.py").write_text(textwrap.dedent(MIXIN))
    source = textwrap.dedent(RECEIVER)
    (tmp_path / "receiver.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.path.endswith("receiver.py")})
    assert _marked(source, "VALID")
    assert flagged == _marked(source, "INVALID")
