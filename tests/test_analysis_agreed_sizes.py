"""A group's size held in a local name (issue 14, values made uniform by a
collective).

``n = 1; n = get_world_size(group=self.dp_tp_group)`` holds the size of the
``dp_tp`` group: past ``if n > 1: x = broadcast(x, group=self.dp_tp_group)``
without an ``else``, the group has one rank, so what the arm assigns cannot
differ within it.  Rank 0 works a request out, broadcasts the outcome when
the group has several ranks, and every rank raises on the outcome's error:
a caller that skips a collective when it catches that error stays in step.
The test may ask the group itself, ``if dist.get_world_size(group=
self.tp_group) > 1:``.  A name bound to anything else, or a size asked of
another group, agrees nothing.  Each VALID shape sits beside the INVALID one that must still be
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


ASKED_INLINE = """
    import os

    import torch.distributed as dist


    class Cache:
        def __init__(self, tp_group, cp_group):
            self.tp_group = tp_group
            self.cp_group = cp_group

        def _blocks(self, path):
            blocks = len(os.listdir(path))
            if dist.get_world_size(group=self.tp_group) > 1:
                agreed = [blocks]
                dist.broadcast_object_list(agreed, src=0, group=self.tp_group)
                blocks = agreed[0]
            return blocks

        def _blocks_other(self, path):
            blocks = len(os.listdir(path))
            if dist.get_world_size(group=self.cp_group) > 1:
                agreed = [blocks]
                dist.broadcast_object_list(agreed, src=0, group=self.tp_group)
                blocks = agreed[0]
            return blocks

        def fill(self, path, tensor):
            if self._blocks(path) == 0:
                return None
            dist.all_reduce(tensor, group=self.tp_group)        # VALID: the tp group's size decides
            return tensor

        def fill_other(self, path, tensor):
            if self._blocks_other(path) == 0:
                return None
            dist.all_reduce(tensor, group=self.tp_group)        # INVALID: the cp group's size
            return tensor
"""


def test_a_size_asked_of_a_group_in_the_test_itself_names_that_group(tmp_path):
    source = textwrap.dedent(ASKED_INLINE)
    (tmp_path / "cache.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.function.startswith("Cache.fill")})
    assert flagged == _marked(source, "INVALID"), [(f.line, f.message) for f in findings]
    assert _marked(source, "VALID")


IN_PLACE = """
    import os

    import torch
    import torch.distributed as dist


    class Sampler:
        def __init__(self, tp_sync_group, cp_sync_group, group):
            self.tp_sync_group = tp_sync_group
            self.cp_sync_group = cp_sync_group
            self.group = group

        def _sized(self, path):
            statuses = torch.tensor([len(os.listdir(path))])
            if dist.get_world_size(self.tp_sync_group) > 1:
                dist.all_reduce(statuses, op=dist.ReduceOp.MAX, group=self.tp_sync_group)
            return statuses

        def _present(self, path):
            statuses = torch.tensor([len(os.listdir(path))])
            if self.tp_sync_group is not None:
                dist.all_reduce(statuses, op=dist.ReduceOp.MAX, group=self.tp_sync_group)
            return statuses

        def _other_present(self, path):
            statuses = torch.tensor([len(os.listdir(path))])
            if self.cp_sync_group is not None:
                dist.all_reduce(statuses, op=dist.ReduceOp.MAX, group=self.tp_sync_group)
            return statuses

        def _unnamed_present(self, path):
            statuses = torch.tensor([len(os.listdir(path))])
            if self.group is not None:
                dist.all_reduce(statuses, op=dist.ReduceOp.MAX, group=self.tp_sync_group)
            return statuses

        def step_sized(self, path, t):
            if self._sized(path).item() > 0:
                return
            dist.all_reduce(t, group=self.tp_sync_group)        # VALID: reduced in place wherever tp has peers

        def step_present(self, path, t):
            if self._present(path).item() > 0:
                return
            dist.all_reduce(t, group=self.tp_sync_group)        # VALID: reduced wherever the tp group is set up

        def step_other(self, path, t):
            if self._other_present(path).item() > 0:
                return
            dist.all_reduce(t, group=self.tp_sync_group)        # INVALID: the cp group's presence
            return t

        def step_unnamed(self, path, t):
            if self._unnamed_present(path).item() > 0:
                return
            dist.all_reduce(t, group=self.tp_sync_group)        # INVALID: a group no dimension names
            return t
"""


def test_a_buffer_reduced_in_place_where_the_group_has_peers_agrees(tmp_path):
    source = textwrap.dedent(IN_PLACE)
    (tmp_path / "sampler.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.function.startswith("Sampler.step")})
    assert flagged == _marked(source, "INVALID"), [(f.line, f.message) for f in findings]
    assert _marked(source, "VALID")
