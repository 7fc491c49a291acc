"""An executor loop over a `Distributed`-like communicator (`self.dist`).

Under attention-DP every TP rank owns its own requests, so request-derived
state differs between TP ranks; without it the first rank's schedule is
broadcast and the same state agrees across TP (but not across PP stages).
"""


class Drafter:
    def __init__(self, dist):
        self.dist = dist

    def forward(self, batch):
        hidden = [len(r.tokens) for r in batch]
        return self.dist.tp_allreduce(sum(hidden))

    def dummy_forward(self):
        return self.dist.tp_allreduce(0)


class ScheduleOutput:
    def __init__(self, requests, transfer_in_progress):
        self.requests = requests
        self.transfer_in_progress = transfer_in_progress


class Executor:
    def __init__(self, dist, kv_cache_manager, enable_attention_dp, benchmark_req_queues_size):
        self.dist = dist
        self.kv_cache_manager = kv_cache_manager
        self.enable_attention_dp = enable_attention_dp
        self.benchmark_req_queues_size = benchmark_req_queues_size
        self.active_requests = []
        self.is_running = True
        self.max_draft_len = 4
        self.drafter_max_seq_len = 2048
        self.drafter = Drafter(dist)
        self._fill_phase_active = False
        self._pp_transfer_in_progress = False

    # -- model-parallel status exchange ---------------------------------------
    def _allgather_model_parallel_status(self, status):
        if self.enable_attention_dp:
            return self.dist.tp_allgather(status)
        return self.dist.tp_cp_allgather(status)

    def _update_fill_phase(self):
        self._fill_phase_active = len(self.active_requests) < self.benchmark_req_queues_size

    def _sync_fill_gate_insufficient_kv(self):
        """Leaves before the status exchange on this rank's own fill flag."""
        if self.benchmark_req_queues_size == 0 or not self._fill_phase_active:
            return False
        free_blocks = self.kv_cache_manager.get_num_free_blocks()
        statuses = self._allgather_model_parallel_status(free_blocks < 8)  # expect: CSL102
        return any(statuses)

    def _is_fill_complete(self):
        """Packs the local conditions into one status and always exchanges it."""
        local = (self._fill_phase_active, len(self.active_requests) >= self.benchmark_req_queues_size)
        statuses = self._allgather_model_parallel_status(local)
        if self.benchmark_req_queues_size == 0:
            return True
        return all(done for _active, done in statuses)

    # -- the event loop ----------------------------------------------------------
    def _fetch_new_requests(self):
        return []

    def _schedule(self):
        return list(self.active_requests)

    def _can_queue(self, scheduled_batch):
        if self.enable_attention_dp:
            sizes = self.dist.tp_allgather(len(scheduled_batch))
            return sum(sizes) > 0
        return len(scheduled_batch) > 0

    def _executor_loop(self):
        """An idle rank skips the rest of the iteration, including the exchange."""
        while self.is_running:
            self.active_requests.extend(self._fetch_new_requests())
            if not self.active_requests:
                continue
            scheduled_batch = self._schedule()
            if self._can_queue(scheduled_batch):  # expect: CSL102
                self._forward(scheduled_batch)

    def _executor_loop_agreed(self):
        while self.is_running:
            self.active_requests.extend(self._fetch_new_requests())
            has_work = self.dist.tp_allgather(bool(self.active_requests))
            if not any(has_work):
                continue
            scheduled_batch = self._schedule()
            if self._can_queue(scheduled_batch):
                self._forward(scheduled_batch)

    def _forward(self, scheduled_batch):
        return len(scheduled_batch)

    # -- pipeline-parallel transfer status -----------------------------------------
    def _check_transfer_status_local(self):
        """Each PP stage decides from its own requests whether to exchange."""
        need_check = any(r.is_disagg_generation_transmission_in_progress for r in self.active_requests)
        if need_check:
            self.dist.pp_allgather(len(self.active_requests))  # expect: CSL101

    def _pp_schedule_and_propagate(self):
        output = None
        if self.dist.is_first_pp_rank:
            in_progress = any(r.is_disagg_generation_transmission_in_progress for r in self.active_requests)
            output = ScheduleOutput(self._schedule(), in_progress)
        output = self.dist.pp_broadcast(output, root=0)
        self._pp_transfer_in_progress = output.transfer_in_progress
        return output

    def _check_transfer_status_propagated(self):
        """The flag came from the first stage through the schedule broadcast."""
        if self._pp_transfer_in_progress:
            self.dist.pp_allgather(len(self.active_requests))

    # -- modes ----------------------------------------------------------------------------
    def _sync_without_adp(self, payload):
        """Without attention-DP the request list is the broadcast schedule."""
        if not self.enable_attention_dp:
            if self.active_requests:
                return self.dist.tp_broadcast(payload, root=0)
        return payload

    def _sync_with_adp(self, payload):
        if self.enable_attention_dp:
            if self.active_requests:
                return self.dist.tp_allgather(payload)  # expect: CSL101
        return payload

    def _reduce_if_tensor_parallel(self, value):
        if self.dist.tp_size > 1:
            return self.dist.tp_allreduce(value)
        return value

    def _hand_over_to_next_stage(self, payload):
        """Point-to-point between stages is not a collective."""
        if self.dist.is_first_pp_rank:
            self.dist.send_object(payload, self.dist.next_pp_rank)
        else:
            payload = self.dist.recv_object(self.dist.prev_pp_rank)
        return payload

    # -- speculative decoding ---------------------------------------------------------
    def _draft_if_fits(self, scheduled_batch):
        """The drafter runs (and reduces) only where the local sequences fit."""
        longest = max((r.seq_len for r in scheduled_batch), default=0)
        if longest + self.max_draft_len <= self.drafter_max_seq_len:
            return self.drafter.forward(scheduled_batch)  # expect: CSL101
        return None

    def _decode_step(self):
        scheduled_batch = self._schedule()
        self._draft_if_fits(scheduled_batch)
        self._draft_always(scheduled_batch)
        self._step_with_local_errors(scheduled_batch)
        self._step_with_synced_errors(scheduled_batch)

    def _draft_always(self, scheduled_batch):
        longest = max((r.seq_len for r in scheduled_batch), default=0)
        fits = longest + self.max_draft_len <= self.drafter_max_seq_len
        if fits:
            self.drafter.forward(scheduled_batch)
        else:
            self.drafter.dummy_forward()
        return fits

    # -- disaggregated context transfer ------------------------------------------------
    def _check_ctx_transfer_status(self):
        return self.dist.tp_allgather(self.kv_cache_manager.get_num_free_blocks())

    def _prepare_context_phase(self, needed_blocks):
        """The free-block count of this rank's pool gates the exchange."""
        if self.kv_cache_manager.get_num_free_blocks() < needed_blocks:
            self._check_ctx_transfer_status()  # expect: CSL101

    def _prepare_context_phase_agreed(self, needed_blocks):
        short = self.dist.tp_allgather(self.kv_cache_manager.get_num_free_blocks() < needed_blocks)
        if any(short):
            self._check_ctx_transfer_status()

    # -- errors -----------------------------------------------------------------------------
    def _allocate(self, scheduled_batch):
        if self.kv_cache_manager.get_num_free_blocks() < len(scheduled_batch):
            raise RuntimeError("out of KV blocks")

    def _step_with_local_errors(self, scheduled_batch):
        """An allocation failure on one rank skips the exchange there."""
        try:
            self._allocate(scheduled_batch)
            self.dist.tp_allgather(len(scheduled_batch))  # expect: CSL104
        except RuntimeError:
            self.active_requests.clear()

    def _step_with_synced_errors(self, scheduled_batch):
        error = None
        try:
            self._allocate(scheduled_batch)
        except RuntimeError as exc:
            error = str(exc)
        errors = self.dist.tp_allgather(error)
        if any(errors):
            self.active_requests.clear()
            return False
        self.dist.tp_allgather(len(scheduled_batch))
        return True
