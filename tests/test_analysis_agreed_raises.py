"""Whether a call raises on some ranks only, when its callee itself reaches a
collective (issue 14, values made uniform by a collective).

A function that reaches a collective is walked by the CFG dataflow, not the
summary walk; what decides that it raises is the same there: the decisions
above its ``raise`` statements (and an ``assert``'s test).  A helper whose
rank 0 works a request out and broadcasts the outcome, then raises on the
broadcast error, raises alike on every rank of the group, so a caller that
skips a collective when it catches that error stays in step.  Each VALID
shape sits beside the INVALID one that must still be reported."""

import textwrap

from cslint.api import check_paths

SOURCE = """
    import torch
    import torch.distributed as dist


    class PreparationError(Exception):
        pass


    def prepare(raw):
        return {"inputs": raw, "error": None}


    def check_room(limit):
        if torch.cuda.memory_allocated() > limit:
            raise PreparationError("out of room")


    class Worker:
        def __init__(self, group, limit):
            self.group = group
            self.limit = limit

        def _agreed_inputs(self, raw):
            result = None
            if dist.get_rank(self.group) == 0:
                try:
                    result = prepare(raw)
                except Exception as error:
                    result = {"inputs": None, "error": str(error)}
                box = [result]
            else:
                box = [None]
            dist.broadcast_object_list(box, src=0, group=self.group)
            result = box[0]
            if result["error"] is not None:
                raise PreparationError(result["error"])
            return result["inputs"]

        def _own_inputs(self, raw):
            box = [raw]
            dist.broadcast_object_list(box, src=0, group=self.group)
            if torch.cuda.memory_allocated() > self.limit:
                raise PreparationError("out of room")
            return box[0]

        def _checked(self, raw):
            box = [raw]
            dist.broadcast_object_list(box, src=0, group=self.group)
            assert box[0] is not None
            return box[0]

        def _checked_locally(self, raw):
            box = [raw]
            dist.broadcast_object_list(box, src=0, group=self.group)
            assert dist.get_rank(self.group) < self.limit
            return box[0]

        def _room_inputs(self, raw):
            box = [raw]
            dist.broadcast_object_list(box, src=0, group=self.group)
            check_room(self.limit)
            return box[0]

        def handle_room(self, raw, tensor):
            try:
                self._room_inputs(raw)
            except PreparationError:
                return None
            dist.all_reduce(tensor, group=self.group)          # INVALID: a callee tests this rank's memory
            return tensor

        def handle(self, raw, tensor):
            try:
                self._agreed_inputs(raw)
            except PreparationError:
                return None
            dist.all_reduce(tensor, group=self.group)          # VALID: the broadcast error decides
            return tensor

        def handle_own(self, raw, tensor):
            try:
                self._own_inputs(raw)
            except PreparationError:
                return None
            dist.all_reduce(tensor, group=self.group)          # INVALID: this rank's memory decides
            return tensor

        def handle_checked(self, raw, tensor):
            try:
                self._checked(raw)
            except Exception:
                return None
            dist.all_reduce(tensor, group=self.group)          # VALID: the assert tests the broadcast value
            return tensor

        def handle_checked_locally(self, raw, tensor):
            try:
                self._checked_locally(raw)
            except Exception:
                return None
            dist.all_reduce(tensor, group=self.group)          # INVALID: the assert tests the rank
            return tensor
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def _findings(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "worker.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return source, findings


def test_a_callee_that_reaches_a_collective_raises_as_its_own_tests_say(tmp_path):
    source, findings = _findings(tmp_path)
    flagged = sorted({f.line for f in findings if f.code == "CSL104" and f.path.endswith("worker.py")
                      and f.function.startswith("Worker.handle")})
    assert flagged == _marked(source, "INVALID")
    assert _marked(source, "VALID")


def test_the_source_cited_for_a_raising_collective_callee_is_its_test(tmp_path):
    source, findings = _findings(tmp_path)
    by_line = {f.line: f.message for f in findings if f.path.endswith("worker.py")}
    line = _marked(source, "INVALID")[2]
    assert "rank id" in by_line[line], by_line[line]
