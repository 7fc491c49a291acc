"""A call that emits a log record through the standard library's
``logging`` does not raise (its handlers report their own errors and
return): only evaluating its arguments can fail, as with a builtin
(``logs.py``; issue 14, SGLang's HiCache prefetch and FlashInfer workspace
chains cited a ``logger.debug``/``logger.exception`` call as local work).
Each VALID shape sits beside the INVALID one that must still be reported:
work that can fail on this rank in the log call's place, and an object
merely called ``logger`` that the module did not get from ``logging``.
"""

import textwrap

from cslint.api import check_paths

SHAPES = """
    import logging
    import torch
    import torch.distributed as dist

    logger = logging.getLogger(__name__)
    log = logging.getLogger("prefetch")


    def query(op):
        with open(op.path) as handle:
            return len(handle.read())


    class Prefetcher:
        def __init__(self, group, sink, jobs):
            self.tp_group = group
            self.sink = sink
            self.jobs = jobs
            self.ready = False
            self.checked = False

        def step(self, tensor):
            try:
                op = self.jobs[0]
                try:
                    hits = query(op)
                except Exception:
                    logger.exception("query failed for %s", op.name)
                    hits = 0
                counts = [hits]
                dist.all_reduce(tensor, group=self.tp_group)          # VALID: the log call does not raise
            except KeyboardInterrupt:
                return None
            return tensor

        def step_module_logging(self, tensor):
            try:
                op = self.jobs[0]
                try:
                    hits = query(op)
                except Exception:
                    logging.warning("query failed for %s", op.name)
                    hits = 0
                counts = [hits]
                dist.all_reduce(tensor, group=self.tp_group)          # VALID: the logging module's own call
            except KeyboardInterrupt:
                return None
            return tensor

        def step_written(self, tensor):
            try:
                op = self.jobs[0]
                try:
                    hits = query(op)
                except Exception:
                    self.sink.write("query failed")
                    hits = 0
                counts = [hits]
                dist.all_reduce(tensor, group=self.tp_group)          # INVALID: writing to the sink may fail here
            except KeyboardInterrupt:
                return None
            return tensor

        def build(self, tensor, size):
            try:
                self.ready = size > 0
                log.debug("ready=%s size=%d", self.ready, size)
            except Exception:
                self.ready = False
            if self.ready:
                dist.all_reduce(tensor, group=self.tp_group)          # VALID: only the log call is in the try
            return tensor

        def build_with(self, tensor, size, logger):
            try:
                self.checked = size > 0
                logger.debug("ready=%s size=%d", self.checked, size)
            except Exception:
                self.checked = False
            if self.checked:
                dist.all_reduce(tensor, group=self.tp_group)          # INVALID: a parameter may be any object
            return tensor
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def test_a_log_call_sends_no_rank_into_a_handler(tmp_path):
    source = textwrap.dedent(SHAPES)
    (tmp_path / "module.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.path.endswith("module.py")})
    assert flagged == _marked(source, "INVALID")
    assert _marked(source, "VALID")
