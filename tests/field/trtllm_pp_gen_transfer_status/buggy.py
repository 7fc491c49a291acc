"""Disaggregated generation with pipeline parallelism: each stage decides on its own to poll transfers.

Upstream: NVIDIA/TensorRT-LLM PR #15595 ("[None][fix] Fix disagg gen-consensus deadlock
          under pipeline parallelism"; the incident is this project's seed 004).
Group: the transfer-status allgather's group (spanning the PP ranks of the
generation server).
Why ranks diverge: under PP the first stage schedules, and each stage keeps
its own view of the active requests.  Whether a KV transfer is still in
progress is computed from that local view, so one stage enters the status
allgather while another skips it.
Variant: buggy -- a per-stage view of request states gates the allgather.
"""


class GenTransceiver:
    def __init__(self, dist):
        self.dist = dist

    def check_gen_transfer_status(self, at_least):
        return self.dist.pp_allgather(at_least)


class GenExecutor:
    def __init__(self, dist, kv_cache_transceiver):
        self.dist = dist
        self.kv_cache_transceiver = kv_cache_transceiver
        self.active_requests = []

    def _check_disagg_gen_transfer_status(self):
        need_check = any(req.is_disagg_generation_transmission_in_progress for req in self.active_requests)
        if need_check:
            self.kv_cache_transceiver.check_gen_transfer_status(0)  # expect: CSL101

    def step(self, scheduled):
        self._check_disagg_gen_transfer_status()
        return scheduled
