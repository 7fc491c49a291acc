"""Checkpoint save/load and shutdown paths of a data-parallel trainer.

The engine's save routine ends in a barrier, so it must be called on every
rank; filesystem state, signals and local I/O errors differ between ranks.
"""

import os
import signal
import sys

import torch
import torch.distributed as dist


class CheckpointEngine:
    def __init__(self):
        self.rank = dist.get_rank()

    def save(self, state, path):
        if self.rank == 0:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            torch.save(state, path)
        dist.barrier()


class Trainer:
    def __init__(self, model, save_dir):
        self.model = model
        self.save_dir = save_dir
        self.engine = CheckpointEngine()
        self.is_master = dist.get_rank() == 0
        self.stop_requested = False
        signal.signal(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self, signum, frame):
        self.stop_requested = True

    def save_on_master(self, step):
        """Only the master enters the save routine and its barrier."""
        if self.is_master:
            self.engine.save(self.model.state_dict(), f"{self.save_dir}/step{step}.pt")  # expect: CSL101

    def save_everywhere(self, step):
        self.engine.save(self.model.state_dict(), f"{self.save_dir}/step{step}.pt")

    def load_if_present(self, path):
        """Each rank looks at its own filesystem view before the broadcast."""
        state = [None]
        if os.path.exists(path):
            dist.broadcast_object_list(state, src=0)  # expect: CSL101
        return state[0]

    def load_with_rank0_decision(self, path):
        """The first rank decides and broadcasts the decision."""
        found = [os.path.exists(path)] if self.is_master else [None]
        dist.broadcast_object_list(found, src=0)
        state = [torch.load(path)] if found[0] and self.is_master else [None]
        if found[0]:
            dist.broadcast_object_list(state, src=0)
        return state[0]

    def train(self, batches):
        """A signal on one rank ends its loop while the others reduce again."""
        for batch in batches:
            if self.stop_requested:
                break
            loss = self.model(batch)
            dist.all_reduce(loss)  # expect: CSL102

    def train_with_agreed_stop(self, batches):
        for batch in batches:
            stop = torch.tensor([int(self.stop_requested)])
            dist.all_reduce(stop, op=dist.ReduceOp.MAX)
            if stop.item():
                break
            loss = self.model(batch)
            dist.all_reduce(loss)

    def _write_shard(self, path):
        with open(path, "wb") as handle:
            torch.save(self.model.state_dict(), handle)

    def save_shard_swallowing_errors(self, path):
        """A local I/O error jumps past the barrier on that rank only."""
        try:
            self._write_shard(path)
            dist.barrier()  # expect: CSL104
        except OSError as error:
            print(f"could not write {path}: {error}")

    def save_shard_barrier_in_finally(self, path):
        try:
            self._write_shard(path)
        finally:
            dist.barrier()

    def save_shard_barrier_after(self, path):
        try:
            self._write_shard(path)
        except OSError as error:
            print(f"could not write {path}: {error}")
        dist.barrier()

    def shutdown_on_master(self):
        """The master leaves the process while the others wait in the barrier."""
        if self.is_master and self.stop_requested:
            sys.exit(0)
        dist.barrier()  # expect: CSL102

    def maybe_barrier_for_debugging(self):
        """An environment switch set identically for the whole job."""
        if os.environ.get("TRAINER_DEBUG_SYNC") == "1":
            dist.barrier()

    def barrier_on_first_local_rank(self):
        if int(os.environ["LOCAL_RANK"]) == 0:
            dist.barrier()  # expect: CSL101
