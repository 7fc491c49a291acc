"""Disaggregated context server: the transfer-status poll is gated on this rank's fitting count.

Upstream: NVIDIA/TensorRT-LLM PR #14020 ("[None][fix] PyExecutor Hang in Disagg TP Prefill").
Group: tp (checking the context-transfer status allgathers over the TP group).
Why ranks diverge: see buggy.py.
Variant: fixed -- the gating condition is OR-reduced over the TP group: if
any rank needs to wait for transfers, every rank enters the status check.
"""


class ContextTransceiver:
    def __init__(self, dist):
        self.dist = dist
        self.completed = []

    def check_context_transfer_status(self, at_least):
        done_everywhere = self.dist.tp_allgather(len(self.completed))
        return min(done_everywhere) >= at_least


class ContextExecutor:
    def __init__(self, dist, scheduler, kv_cache_transceiver):
        self.dist = dist
        self.scheduler = scheduler
        self.kv_cache_transceiver = kv_cache_transceiver
        self.active_requests = []

    def _schedule(self):
        fitting, fitting_gen_init = self.scheduler.schedule_request(self.active_requests)
        return fitting, fitting_gen_init, len(fitting)

    def iteration(self):
        scheduled, fitting_gen_init, num_fitting_reqs = self._schedule()
        if self.kv_cache_transceiver is not None:
            locally_idle = num_fitting_reqs == 0 and not fitting_gen_init
            if any(self.dist.tp_allgather(locally_idle)):
                self.kv_cache_transceiver.check_context_transfer_status(1)
        return scheduled
