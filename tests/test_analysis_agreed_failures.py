"""A fallback taken only where a process group is not set up (issue 14, the
SGLang multimodal input cluster): ``if not (dist.is_initialized() and
self.dp_tp_cpu_group is not None): return [local_error]`` runs only where
the process has no peers in that group (``syntax.single_rank_side``), so
what it hands back carries nothing that differs; a setting in its place
decides nothing of the kind.  The VALID shape sits beside the INVALID one
that must still be reported.
"""

import textwrap

from cslint.api import check_paths

GROUP_FALLBACK = """
    import torch
    import torch.distributed as dist


    def decode_item(item):
        with open(item.path) as handle:
            item.data = handle.read()


    class Gatherer:
        def __init__(self, group, gather_errors):
            self.dp_tp_cpu_group = group
            self.gather_errors = gather_errors

        def _agree(self, local_error):
            if not (dist.is_initialized() and self.dp_tp_cpu_group is not None):
                return [local_error]
            errors = [None] * dist.get_world_size(group=self.dp_tp_cpu_group)
            dist.all_gather_object(errors, local_error, group=self.dp_tp_cpu_group)
            return errors

        def _agree_if_asked(self, local_error):
            if not (dist.is_initialized() and self.gather_errors):
                return [local_error]
            errors = [None] * dist.get_world_size(group=self.dp_tp_cpu_group)
            dist.all_gather_object(errors, local_error, group=self.dp_tp_cpu_group)
            return errors

        def _decode(self, item):
            try:
                decode_item(item)
            except OSError as error:
                return str(error)
            return None

        def run(self, item, tensor):
            errors = self._agree(self._decode(item))
            if any(errors):
                return None
            dist.all_reduce(tensor, group=self.dp_tp_cpu_group)          # VALID: no group, no peers to disagree with
            return tensor

        def run_if_asked(self, item, tensor):
            errors = self._agree_if_asked(self._decode(item))
            if any(errors):
                return None
            dist.all_reduce(tensor, group=self.dp_tp_cpu_group)          # INVALID: a setting skips the gather
            return tensor
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def _flagged(tmp_path, source):
    source = textwrap.dedent(source)
    (tmp_path / "module.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return source, sorted({f.line for f in findings if f.path.endswith("module.py")})


def test_a_fallback_taken_only_where_the_group_is_not_set_up_carries_nothing_that_differs(tmp_path):
    source, flagged = _flagged(tmp_path, GROUP_FALLBACK)
    assert flagged == _marked(source, "INVALID")
    assert _marked(source, "VALID")
