"""Executor loop under attention-DP: padding with a dummy request raises on a KV-saturated rank.

Upstream: NVIDIA/TensorRT-LLM PR #17978 ("[None][fix] Handle refused attention DP pad
          dummy on non-DSv4 ranks").
Group: tp (`_can_queue` allgathers the scheduled batch sizes over the TP group).
Why ranks diverge: see buggy.py.
Variant: fixed -- a refused dummy (None, or an out-of-pages error) leaves the
rank unpadded; its empty batch reaches `_can_queue`, whose allgather makes
every rank skip the forward together and retry later.
"""


class OutOfPagesError(RuntimeError):
    pass


class ExecutorLoop:
    def __init__(self, dist, kv_cache_manager, scheduler, enable_attention_dp):
        self.dist = dist
        self.kv_cache_manager = kv_cache_manager
        self.scheduler = scheduler
        self.enable_attention_dp = enable_attention_dp
        self.active_requests = []
        self.is_shutdown = False

    def _pad_attention_dp_dummy_request(self):
        if not self.enable_attention_dp or self.active_requests:
            return
        try:
            dummies = self.kv_cache_manager.add_dummy_requests([0], is_gen=True)
        except OutOfPagesError:
            dummies = None
        if dummies is None:
            return
        self.active_requests.append(dummies[0])

    def _can_queue(self, scheduled_batch):
        if self.enable_attention_dp:
            sizes = self.dist.tp_allgather(scheduled_batch.batch_size)
            return all(size > 0 for size in sizes)
        return scheduled_batch.batch_size > 0

    def run(self):
        while not self.is_shutdown:
            self._pad_attention_dp_dummy_request()
            scheduled_batch = self.scheduler.schedule(self.active_requests)
            if self._can_queue(scheduled_batch):
                self.scheduler.forward(scheduled_batch)
