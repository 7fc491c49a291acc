"""A call site that a flag parameter decides is judged in the calling
contexts that pass the flag (issue 14 §2.7): the error handler gathers its
replies only when the caller says the fault is agreed (``aligned=True``),
which the one caller passing it does after a world reduction, having set the
fault field right before the call; the rank-local callers leave the flag at
its default and never reach the gather.  The fault still parts the ranks in
those rank-local contexts, so what reads the field it sets downstream is
reported in its stead."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

ENGINE = """\
import torch
import torch.distributed as dist


class Engine:
    def __init__(self):
        self.failed = None
        self.stopping = False
        self.replies = []

    def handle(self, msg, *, aligned=False):
        is_fatal = self.failed is not None or msg.startswith("fatal")
        if is_fatal:
            if self.failed is None:
                self.failed = RuntimeError(msg)
            self.stopping = True
            if aligned:
                dist.all_gather_object([None] * dist.get_world_size(), self.replies)
        self.replies.clear()

    def load(self, path):
        try:
            with open(path) as f:
                return f.read()
        except OSError as e:
            self.handle(f"fatal: {e}")
        return None

    def check_poisoned(self, local_bad):
        flag = torch.tensor([int(local_bad)])
        dist.all_reduce(flag)
        if flag.item():
            self.failed = RuntimeError("poisoned")
            self.stopping = True
            self.handle("poisoned", aligned=True)

    def step(self, t):
        if not self.stopping:
            dist.all_reduce(t)
"""


def _line(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def _findings(tmp_path, text: str, report: str = "root-cause") -> list:
    (tmp_path / "engine.py").write_text(textwrap.dedent(text))
    return check_paths([str(tmp_path)], report=report).findings


def _lines(tmp_path, text: str, report: str = "root-cause") -> list:
    return sorted((f.code, f.line) for f in _findings(tmp_path, text, report))


GATHER = _line(ENGINE, "dist.all_gather_object")
STEP = _line(ENGINE, "dist.all_reduce(t)")


def test_a_site_only_the_agreed_calling_context_reaches_is_no_hazard(tmp_path):
    # the gather runs only with aligned=True; the one call passing it set the fault field right before
    # it, after a world reduction, so `is_fatal` is the same on every rank there.  The rank-local fault
    # of `load` still sets `stopping` on one rank: `step`'s all-reduce reads it and is the finding.
    assert _lines(tmp_path, ENGINE) == [("CSL101", STEP)]
    assert _lines(tmp_path, ENGINE, "per-site") == [("CSL101", STEP)]
    (step,) = _findings(tmp_path, ENGINE)
    assert step.upstream is None and "reported-upstream" not in {d.kind for d in step.confidence.doubts}


def test_a_call_between_the_field_set_and_the_call_keeps_the_hazard(tmp_path):
    # what `note` does may change the fault field before the handler reads it
    text = ENGINE.replace('            self.stopping = True\n            self.handle("poisoned"',
                          '            self.note()\n            self.handle("poisoned"') \
        + "\n    def note(self):\n        self.failed = None\n"
    assert ("CSL101", GATHER) in _lines(tmp_path, text)


def test_a_flag_not_passed_as_a_constant_keeps_the_hazard(tmp_path):
    # some call hands the flag a value the analysis does not know: any context may reach the gather
    text = ENGINE + "\n    def retry(self, msg, agreed):\n        self.handle(msg, aligned=agreed)\n"
    assert ("CSL101", GATHER) in _lines(tmp_path, text)


def test_the_caller_passing_the_flag_under_a_rank_local_test_is_reported_there(tmp_path):
    # the calling context that reaches the gather is itself rank-local: the call is a hazard of its own,
    # and in that context the fault field holds what one rank alone wrote, so the gather stays one too
    text = "import os\n" + ENGINE.replace("        if flag.item():\n", '        if os.path.exists("/tmp/bad"):\n')
    found = _lines(tmp_path, text, "per-site")
    assert ("CSL101", _line(text, 'self.handle("poisoned", aligned=True)')) in found
    assert ("CSL101", _line(text, "dist.all_gather_object")) in found


def test_a_field_the_handler_sets_before_its_test_from_a_rank_local_record_is_not_the_callers(tmp_path):
    # the handler overwrites the fault field from the last error this rank recorded before testing it:
    # what the test reads is that record where the caller's value is None
    text = ENGINE.replace("        is_fatal = self.failed is not None",
                          "        self.failed = self.failed or self.last_error\n"
                          "        is_fatal = self.failed is not None") \
        .replace("        except OSError as e:\n", "        except OSError as e:\n            self.last_error = e\n")
    assert ("CSL101", _line(text, "dist.all_gather_object")) in _lines(tmp_path, text, "per-site")


def test_a_field_the_handler_sets_before_its_test_from_agreed_values_stays_the_callers(tmp_path):
    # the handler's own write of the fault field writes, in the agreed calling context, the caller's
    # fault or the message the caller passed: the same on every rank (a handler that records the fault
    # only where none is set yet, as the gather's context already has it)
    text = ENGINE.replace("        is_fatal = self.failed is not None",
                          "        self.failed = self.failed or RuntimeError(msg)\n"
                          "        is_fatal = self.failed is not None")
    assert ("CSL101", _line(text, "dist.all_gather_object")) not in _lines(tmp_path, text, "per-site")


def test_the_readers_downstream_keep_one_root_cause(tmp_path):
    # two readers of the field the fault sets: the first carries the root cause, the second is listed
    # on it, naming the line where the ranks part
    text = ENGINE + "\n    def drain(self, t):\n        if self.stopping:\n            return\n        dist.barrier()\n"
    (step,) = _findings(tmp_path, text)
    assert step.line == STEP
    assert [(ref.line, ref.function) for ref in step.downstream] == [(_line(text, "dist.barrier()"), "Engine.drain")]
    per_site = {f.line: f for f in _findings(tmp_path, text, "per-site")}
    assert sorted(per_site) == [STEP, _line(text, "dist.barrier()")]
    reader = per_site[_line(text, "dist.barrier()")]
    assert (reader.upstream.guard_line, reader.upstream.line) == (_line(text, "if not self.stopping"), STEP)
    (note,) = [d.note for d in reader.confidence.doubts if d.kind == "reported-upstream"]
    assert f"line {_line(text, 'if is_fatal:')} parts the ranks" in note


PUBLISHER = """\
class Executor:
    def __init__(self, dist, enable_attention_dp):
        self.dist = dist
        self.enable_attention_dp = enable_attention_dp
        self.fault = None
        self.stopping = False
        self.pending = []

    def handle(self, msg, *, aligned=False):
        multi_rank_adp = self.enable_attention_dp and self.dist.world_size != 1
        is_fatal = self.fault is not None or msg.startswith("fatal")
        if is_fatal:
            if self.fault is None:
                self.fault = RuntimeError(f"fatal: {msg}")
            self.stopping = True
        publish = False
        if is_fatal:
            if multi_rank_adp:
                if aligned:
                    publish = True
            else:
                publish = True
        elif multi_rank_adp:
            self.pending.append(msg)
        else:
            publish = True
        if publish:
            self.publish([msg])

    def publish(self, replies):
        if self.enable_attention_dp and self.dist.world_size != 1:
            self.dist.tp_gather(replies)

    def load(self, path):
        try:
            with open(path) as f:
                return f.read()
        except OSError as e:
            self.handle(str(e))
        return None

    def check_poisoned(self, local_bad):
        if self.dist.allreduce(int(local_bad)):
            self.fault = RuntimeError("poisoned")
            self.stopping = True
            self.handle("poisoned", aligned=True)
"""


def _publisher_lines(tmp_path, text: str) -> list:
    (tmp_path / "executor.py").write_text(text)
    (tmp_path / "pyproject.toml").write_text('[tool.cslint]\npresets = ["tensorrt_llm"]\n')
    return sorted((f.code, f.line) for f in check_paths([str(tmp_path)], report="per-site").findings)


def test_a_publish_flag_set_only_in_the_agreed_context_under_attention_dp_is_no_hazard(tmp_path):
    # under multi-rank attention-DP `publish` holds only for a fatal error with aligned=True, which the one
    # caller passing it set right before the call after a world reduction; the handler's own write of the
    # fault field there writes the caller's fault or the message it passed, the same on every rank
    assert _publisher_lines(tmp_path, PUBLISHER) == []


def test_a_publish_flag_whose_fault_the_handler_rewrites_from_this_rank_stays_a_hazard(tmp_path):
    # the handler replaces the caller's fault with this rank's own record before deciding: the flag differs
    text = PUBLISHER.replace("            if self.fault is None:\n                self.fault = RuntimeError(f\"fatal: {msg}\")\n",
                             "            self.fault = self.fault if self.dist.rank == 0 else None\n")
    assert ("CSL101", _line(text, "self.publish([msg])")) in _publisher_lines(tmp_path, text)
