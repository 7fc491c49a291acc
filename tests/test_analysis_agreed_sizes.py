"""A group's size held in a local name (issue 14, values made uniform by a
collective).

``n = 1; n = get_world_size(group=self.dp_tp_group)`` holds the size of the
``dp_tp`` group: past ``if n > 1: x = broadcast(x, group=self.dp_tp_group)``
without an ``else``, the group has one rank, so what the arm assigns cannot
differ within it.  Rank 0 works a request out, broadcasts the outcome when
the group has several ranks, and every rank raises on the outcome's error:
a caller that skips a collective when it catches that error stays in step.
A name bound to anything else, or a size asked of another group, agrees
nothing.  Each VALID shape sits beside the INVALID one that must still be
reported."""

import textwrap

from cslint.api import check_paths

SOURCE = """
    import torch.distributed as dist


    class PreparationError(Exception):
        pass


    def prepare(raw):
        if raw is None:
            raise ValueError("nothing to prepare")
        return {"inputs": raw, "error": None}


    def load(path):
        with open(path) as f:
            return {"inputs": f.read(), "error": None}


    class Worker:
        def __init__(self, dp_tp_group, cp_group):
            self.dp_tp_group = dp_tp_group
            self.cp_group = cp_group

        def _sized(self, group):
            size = 1
            try:
                if dist.is_initialized():
                    size = dist.get_world_size(group=group)
            except Exception:
                pass
            return size

        def _agreed(self, raw):
            group_world_size = 1
            try:
                if dist.is_initialized():
                    group_world_size = dist.get_world_size(group=self.dp_tp_group)
            except Exception:
                pass
            if dist.get_rank(self.dp_tp_group) == 0:
                try:
                    result = prepare(raw)
                except Exception as error:
                    result = {"inputs": None, "error": str(error)}
                if group_world_size > 1:
                    box = [result]
                    dist.broadcast_object_list(box, src=0, group=self.dp_tp_group)
                    result = box[0]
            elif group_world_size > 1:
                box = [None]
                dist.broadcast_object_list(box, src=0, group=self.dp_tp_group)
                result = box[0]
            else:
                result = load(raw)
            if result["error"] is not None:
                raise PreparationError(result["error"])
            return result["inputs"]

        def _asked_of_another(self, raw):
            group_world_size = 1
            if dist.is_initialized():
                group_world_size = dist.get_world_size(group=self.cp_group)
            if dist.get_rank(self.dp_tp_group) == 0:
                try:
                    result = prepare(raw)
                except Exception as error:
                    result = {"inputs": None, "error": str(error)}
                if group_world_size > 1:
                    box = [result]
                    dist.broadcast_object_list(box, src=0, group=self.dp_tp_group)
                    result = box[0]
            elif group_world_size > 1:
                box = [None]
                dist.broadcast_object_list(box, src=0, group=self.dp_tp_group)
                result = box[0]
            else:
                result = {"inputs": raw, "error": None}
            if result["error"] is not None:
                raise PreparationError(result["error"])
            return result["inputs"]

        def handle(self, raw, tensor):
            try:
                self._agreed(raw)
            except PreparationError:
                return None
            dist.all_reduce(tensor, group=self.dp_tp_group)        # VALID: the dp_tp group's size decides
            return tensor

        def handle_other(self, raw, tensor):
            try:
                self._asked_of_another(raw)
            except PreparationError:
                return None
            dist.all_reduce(tensor, group=self.dp_tp_group)        # INVALID: the cp group's size
            return tensor
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_a_local_size_names_the_group_it_was_asked_of(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "worker.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.function.startswith("Worker.handle")})
    assert flagged == _marked(source, "INVALID"), [(f.line, f.message) for f in findings]
    assert _marked(source, "VALID")
