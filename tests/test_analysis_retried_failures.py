"""A failure an event loop retries before the iteration communicates is no
rank-local skip (issue 14, deferred-poll-retry: SGLang's diffusion pool loop,
where only the source rank receives from its socket before the broadcast and
a failed receive is counted and tried again).

Where the failing rank has issued nothing in the iteration, it goes back to
the same statements and meets its peers in the iteration's first collective,
in the same order as without the failure; a handler that re-raises past a
count ends the job when the failure keeps coming back (``retries.py``).  A
handler without a bound, one that leaves the loop, a failure after a
collective of the iteration (the rank would issue it twice), a loop left on
what the attempt consumed, a ``for`` loop, and a callee that communicates
before it can fail stay reported.  Each VALID shape sits beside INVALID ones
that must still be reported."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

SOURCE = """
    import torch.distributed as dist


    class Pool:
        def __init__(self, sock, group, rank):
            self.sock = sock
            self.group = group
            self.rank = rank
            self.running = True
            self.errors = 0
            self.max_errors = 5

        def receive(self):
            if self.rank == 0:
                frames = [bytes(f) for f in self.sock.recv_multipart()]
            else:
                frames = None
            return self.share(frames)

        def receive_then_parse(self):
            box = [self.sock.recv_multipart() if self.rank == 0 else None]
            dist.broadcast_object_list(box, src=0, group=self.group)
            return [bytes(f) for f in open(box[0]).read()]

        def share(self, frames):
            box = [frames]
            dist.broadcast_object_list(box, src=0, group=self.group)
            return box[0]

        def handle(self, frames):
            dist.all_reduce(frames, group=self.group)

        def serve(self):
            while self.running:
                try:
                    frames = self.receive()
                    self.handle(frames)  # VALID: the source's failed receive is retried before it broadcasts
                    self.errors = 0
                except Exception:
                    self.errors += 1
                    if self.errors >= self.max_errors:
                        raise

        def serve_staged(self, path):
            while True:
                try:
                    staged = open(path).read()
                    self.share(staged)  # VALID: nothing went out before the read failed
                except Exception:
                    self.errors += 1
                    print("retrying")
                    if self.errors > self.max_errors:
                        raise RuntimeError("too many errors")

        def serve_checked(self, path):
            while True:
                def checked(text):
                    if not text:
                        return None
                    return text
                try:
                    staged = checked(open(path).read())
                    self.share(staged)  # VALID: the nested function's return leaves that function, not the loop
                except Exception:
                    self.errors += 1
                    if self.errors > self.max_errors:
                        raise

        def serve_freeing(self, slots, key):
            while self.running:
                try:
                    if self.rank == 0:
                        with self.lock:
                            self.pending.pop(key, None)
                    else:
                        slots.forget(open(key).read())
                    self.share(key)  # VALID: either arm's failure is retried before the broadcast
                except Exception:
                    self.errors += 1
                    if self.errors >= self.max_errors:
                        raise

        def serve_freeing_forever(self, slots, key):
            while self.running:
                try:
                    if self.rank == 0:
                        with self.lock:
                            self.pending.pop(key, None)
                    else:
                        slots.forget(open(key).read())
                    self.share(key)  # INVALID: the arms' failures are swallowed without a bound
                except Exception:
                    print("release failed")

        def serve_forever(self):
            while self.running:
                try:
                    frames = self.receive()
                    self.handle(frames)  # INVALID: a failure that keeps coming back retries alone for good
                except Exception:
                    print("receive failed")

        def serve_until_error(self):
            while self.running:
                try:
                    frames = self.receive()
                    self.handle(frames)  # INVALID: the handler leaves the loop
                except Exception:
                    self.errors += 1
                    if self.errors >= self.max_errors:
                        raise
                    break

        def serve_after_header(self, path):
            while self.running:
                try:
                    self.share("header")
                    staged = open(path).read()
                    self.share(staged)  # INVALID: the header went out before the read failed
                except Exception:
                    self.errors += 1
                    if self.errors >= self.max_errors:
                        raise

        def serve_until_sentinel(self, queue):
            while True:
                try:
                    item = queue.get()
                    if item is None:
                        break
                    staged = open(item).read()
                    self.share(staged)  # INVALID: the failed attempt used up an item the loop ends on
                except Exception:
                    self.errors += 1
                    if self.errors >= self.max_errors:
                        raise

        def serve_items(self, paths):
            for path in paths:
                try:
                    staged = open(path).read()
                    self.share(staged)  # INVALID: a for loop moves on to the next item
                except Exception:
                    self.errors += 1
                    if self.errors >= self.max_errors:
                        raise

        def serve_parsed(self):
            while self.running:
                try:
                    frames = self.receive_then_parse()
                    self.handle(frames)  # INVALID: the callee broadcasts before its parse can fail
                except Exception:
                    self.errors += 1
                    if self.errors >= self.max_errors:
                        raise
"""


def _marked(source: str, word: str) -> list:
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_a_failure_retried_before_the_iteration_communicates_skips_nothing(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "pool.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    # an ``if`` with no exit of its own skips what follows only through its arms' failures: CSL102 where not retried
    flagged = sorted({f.line for f in findings if f.code in ("CSL102", "CSL104")})
    assert _marked(source, "VALID")
    assert flagged == _marked(source, "INVALID")
