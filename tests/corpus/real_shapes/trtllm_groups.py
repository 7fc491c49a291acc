"""Group-precise shapes over a `Distributed`-like communicator: which rank
test endangers which group."""


class Sampler:
    def __init__(self, dist, enable_attention_dp):
        self.dist = dist
        self.enable_attention_dp = enable_attention_dp
        self.active_requests = []
        self.is_warmup = False

    def broadcast_on_world_leader(self, tokens):
        if self.dist.rank == 0:
            return self.dist.broadcast(tokens, root=0)  # expect: CSL101
        return tokens

    def broadcast_on_tp_leader(self, tokens):
        if self.dist.tp_rank == 0:
            return self.dist.tp_broadcast(tokens, root=0)  # expect: CSL101
        return tokens

    def tp_gather_on_first_stage(self, tokens):
        """Every TP group lies inside one pipeline stage: the stage test agrees over TP."""
        if self.dist.pp_rank == 0:
            return self.dist.tp_allgather(tokens)
        return tokens

    def pp_gather_on_tp_leader(self, tokens):
        if self.dist.tp_rank == 0:
            return self.dist.pp_allgather(tokens)
        return tokens

    def pp_gather_on_first_stage(self, tokens):
        if self.dist.pp_rank == 0:
            return self.dist.pp_allgather(tokens)  # expect: CSL101
        return tokens

    def skip_during_warmup(self, tokens):
        if self.is_warmup:
            return tokens
        return self.dist.tp_allgather(tokens)

    def per_request_exchange(self):
        """One TP exchange per locally owned request under attention-DP."""
        if not self.enable_attention_dp:
            return []
        sizes = []
        for request in self.active_requests:
            sizes.append(self.dist.tp_allgather(len(request.tokens)))  # expect: CSL103
        return sizes

    def exchange_request_count(self):
        return self.dist.tp_allgather(len(self.active_requests))


class ResponsePublisher:
    """Responses are collected on the TP group that holds the world's first rank."""

    def __init__(self, dist, enable_attention_dp, gather_all_responses):
        self.dist = dist
        self.enable_attention_dp = enable_attention_dp
        self.gather_all_responses = gather_all_responses
        self.published = {}

    def publish(self, responses):
        """Whole TP groups leave together; the world allgather runs only when nobody left."""
        if 0 not in self.dist.mapping.tp_group and not self.gather_all_responses:
            return
        if self.enable_attention_dp and self.dist.world_size != 1:
            if not self.gather_all_responses:
                gathered = self.dist.tp_gather(responses)
            else:
                gathered = self.dist.allgather(responses)
            if gathered is not None:
                for part in gathered:
                    responses.update(part)
        if self.dist.rank == 0 or self.gather_all_responses:
            self.published.update(responses)

    def publish_from_first_rank_only(self, responses):
        """Non-first ranks of the first TP group leave before its gather."""
        if self.dist.rank != 0:
            return
        gathered = self.dist.tp_gather(responses)  # expect: CSL102
        for part in gathered:
            self.published.update(part)
