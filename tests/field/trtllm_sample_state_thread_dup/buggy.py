"""Pipeline-parallel executor: a background thread duplicates the communicator itself.

Upstream: NVIDIA/TensorRT-LLM PR #13267 ("[https://nvbugs/6095421][fix] fix PP>=3 executor
          shutdown hang in broadcast sample state loop", root cause 1).
Group: pp (the duplicated communicator; `Dup()` is collective over it).
Why ranks diverge: the sample-state broadcast thread starts with
`MPI_Comm_dup` on the pipeline communicator, concurrently with the event-loop
thread's point-to-point traffic on the same communicator.  When the dup
happens relative to the event loop's sends and receives depends on each
process's thread scheduling, so the collective interleaves differently on
each rank: an intermittent startup deadlock.
Variant: buggy -- a collective inside a thread target, racing the main loop.
"""

import queue
import threading


class PPExecutor:
    def __init__(self, dist):
        self.dist = dist
        self.sample_states = queue.Queue()
        self.is_shutdown = False

    def _event_loop(self):
        while not self.is_shutdown:
            state = self.dist.recv_object(self.dist.prev_pp_rank)
            self.sample_states.put(state)
            self.dist.send_object(state, self.dist.next_pp_rank)

    def _broadcast_sample_state_handler(self):
        comm = self.dist.pp_comm.Dup()  # expect: CSL101
        while not self.is_shutdown:
            state = self.sample_states.get()
            comm.bcast(state, root=self.dist.pp_size - 1)

    def start_worker(self):
        self.worker = threading.Thread(target=self._event_loop, daemon=True)
        self.broadcaster = threading.Thread(target=self._broadcast_sample_state_handler, daemon=True)
        self.worker.start()
        self.broadcaster.start()
