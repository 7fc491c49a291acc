"""PD prefill with pipeline parallelism: the bootstrap queue re-polls local state after the PP consensus.

Upstream: sgl-project/sglang PR #31869 ("[PD+PP] Honor PP consensus for bootstrap and
          prealloc"), follow-up of PR #31030.
Group: pp for the consensus; the batch's forward all-reduces over the
tensor-parallel group inside each stage, whose ranks also re-poll on their own.
Why ranks diverge: the stages agree which requests are bootstrapped, but the
queue consumer then polls each sender again.  An abort that lands between
the consensus and the re-poll is seen by some stages only, so the stages
(and, inside a stage, some TP ranks only) take different requests into the
batch -- possibly none -- and the forward's all-reduce runs on some ranks only.
Variant: buggy -- the batch is built from a second, local poll.
"""

import torch.distributed as dist

READY, FAILED = 2, 0


class BootstrapQueue:
    def __init__(self, pp_group):
        self.queue = []
        self.pp_group = pp_group

    def agree_across_stages(self):
        local = {"ready": [r.rid for r in self.queue if r.sender.poll() == READY],
                 "failed": [r.rid for r in self.queue if r.sender.poll() == FAILED]}
        everyone = [None] * dist.get_world_size(self.pp_group)
        dist.all_gather_object(everyone, local, group=self.pp_group)
        ready = set.intersection(*(set(s["ready"]) for s in everyone))
        failed = set.union(*(set(s["failed"]) for s in everyone))
        return ready, failed

    def pop_bootstrapped(self):
        self.agree_across_stages()
        batch = []
        for req in list(self.queue):
            state = req.sender.poll()
            if state == READY:
                batch.append(req)
                self.queue.remove(req)
            elif state == FAILED:
                self.queue.remove(req)
        return batch


class PrefillStage:
    def __init__(self, queue, tp_group, model):
        self.queue = queue
        self.tp_group = tp_group
        self.model = model

    def step(self):
        batch = self.queue.pop_bootstrapped()
        if not batch:
            return None
        activations = self.model(batch)
        dist.all_reduce(activations, group=self.tp_group)  # expect: CSL102
        return activations
