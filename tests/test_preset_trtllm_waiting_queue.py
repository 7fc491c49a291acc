"""The TensorRT-LLM preset's waiting queue (issue 14, preset-source-too-broad).

Rank 0 fetches the new requests and broadcasts them; every rank adds them to
its waiting queue and pops as many as the active counts allow, counts that
attention-DP gathers over the TP group first.  The routing of a request to a
TP rank comes after the pop, so the TP ranks of a stage hold the same queue,
attention-DP included; the stages pop by their own active counts.  What is
routed to this rank (``all_ranks[tp_rank]``) and the active requests stay
this rank's own."""

import textwrap

from cslint.api import check_source

EXECUTOR = """
    from collections import deque


    class Executor:
        def __init__(self, dist, router, capacity):
            self.dist = dist
            self.router = router
            self.capacity = capacity
            self.enable_attention_dp = True
            self.waiting_queue = deque()
            self.active_requests = []

        def _pop(self, count):
            popped = []
            while self.waiting_queue and len(popped) < count:
                popped.append(self.waiting_queue.popleft())
            return popped

        def fetch(self, arrived):
            self.waiting_queue.extend(self.dist.broadcast(arrived, root=0))
            if self.enable_attention_dp:
                total = sum(self.dist.tp_allgather(len(self.active_requests)))
            else:
                total = len(self.active_requests)
            new_requests = self._pop(self.capacity - total)
            if self.enable_attention_dp:
                if new_requests:
                    self.router.match(self.dist.tp_allgather(len(new_requests)))
                mine = self.router.route(new_requests)[self.dist.tp_rank]
                if mine:
                    self.dist.tp_allgather(len(mine))  # reported: the requests routed to this rank
            if new_requests:
                self.dist.pp_allgather(len(new_requests))  # reported: each stage pops by its own count
            self.active_requests.extend(new_requests)

        def drain(self):
            if self.waiting_queue:
                self.dist.pp_allgather(len(self.waiting_queue))  # reported: the stages' queues may differ
            if self.active_requests:
                self.dist.tp_allgather(len(self.active_requests))  # reported: this rank's own requests
"""


def _found(source):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), presets=["tensorrt_llm"],
                                                          report="per-site").findings)


def _marked(source):
    return [(n, "CSL101") for n, text in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported" in text]


def test_the_waiting_queue_is_the_same_on_the_tp_ranks_of_a_stage():
    assert _found(EXECUTOR) == _marked(EXECUTOR)
