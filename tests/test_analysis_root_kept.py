"""A broadcast's root keeps what it sent through a helper of its module
(issue 14; cslint/analysis/rootkept.py).

An executor's request broadcaster has rank 0 fetch the new requests, then
``if rank == 0: _ = self._share(items, extras)`` / ``else: items, extras =
self._share(items, extras)``: the helper packs its parameters into one
payload and broadcasts it from rank 0 (over the world, or over the first
stage's TP x CP group and then down the stages), so every rank holds rank 0's
list afterwards.  Read one arm at a time, rank 0 kept its own fetched list
and the rank test chose between the arms, so every test of the returned
requests read as rank-local and an executor's shutdown exit cited the fetch's
``rank == 0`` instead of what really differs (this rank's own active
requests)."""

import textwrap

from cslint.api import check_paths

BROADCASTER = """
    import os


    class Broadcaster:
        def __init__(self, dist):
            self.dist = dist
            self.pending_send = None

        def share(self, items):
            if self.dist.rank == 0:
                extras = tuple(item.extra for item in items)
            else:
                extras = None
            if self.dist.rank == 0:
                _ = self._share(items, extras)
            else:
                items, extras = self._share(items, extras)
            return items, extras

        def _share(self, items, extras):
            payload = (items, extras)
            if self.dist.world_size == 1:
                return payload
            if not self.dist.has_pp:
                return self.dist.broadcast(payload, root=0)
            if self.dist.is_first_pp_rank:
                payload = self.dist.tp_cp_broadcast(payload, root=0)
            if not self.dist.is_first_pp_rank:
                payload = self.dist.recv_object(self.dist.prev_pp_rank, 7)
            if not self.dist.is_last_pp_rank:
                if self.pending_send is not None:
                    self.pending_send.wait()
                self.pending_send = self.dist.isend_object(payload, self.dist.next_pp_rank, 7)
            return payload
"""

EXECUTOR = """
    from broadcaster import Broadcaster


    class Engine:
        def __init__(self, dist, inbox):
            self.dist = dist
            self.inbox = inbox
            self.broadcaster = Broadcaster(dist)
            self.active_requests = []
            self.stopping = False

        def admit(self):
            fetched = []
            if self.dist.rank == 0:
                fetched.extend(self.inbox.get())
            fetched, extras = self.broadcaster.share(fetched)
            if fetched:
                self.dist.tp_allgather(len(fetched))
"""

LOOP = """

        def _take(self, fetched):
            kept = []
            for item in fetched:
                if item.is_stop:
                    self.stopping = True
                    break
                kept.append(item)
            return kept

        def step(self):
            fetched = []
            if self.dist.rank == 0:
                fetched.extend(self.inbox.get())
            fetched, extras = self.broadcaster.share(fetched)
            self.active_requests.extend(self._take(fetched))
            if self.stopping and not self.active_requests:
                return None
            return self.dist.tp_allgather(len(self.active_requests))
"""


def _check(tmp_path, broadcaster: str = BROADCASTER, executor: str = EXECUTOR):
    (tmp_path / "broadcaster.py").write_text(textwrap.dedent(broadcaster))
    (tmp_path / "engine.py").write_text(textwrap.dedent(executor))
    (tmp_path / "pyproject.toml").write_text('[tool.cslint]\npresets = ["tensorrt_llm"]\n')
    return check_paths([str(tmp_path)], report="per-site").findings


def _lines(findings) -> list:
    return sorted((f.path.rsplit("/", 1)[-1], f.line, f.code) for f in findings)


def test_requests_the_root_broadcast_are_the_same_on_every_rank(tmp_path):
    # VALID: rank 0 keeps the list it sent, the others hold what they got
    assert _lines(_check(tmp_path)) == []


def test_a_root_that_binds_the_result_itself_is_read_as_it_is(tmp_path):
    # VALID: the root's own assignment is the other arm's, as before
    source = BROADCASTER.replace("_ = self._share(items, extras)", "items, extras = self._share(items, extras)")
    assert _lines(_check(tmp_path, source)) == []


def test_a_helper_rooted_at_another_rank_leaves_the_roots_list_its_own(tmp_path):
    # INVALID: rank 0 keeps its own list while the others get rank 1's
    source = BROADCASTER.replace("root=0", "root=1")
    assert ("engine.py", 19, "CSL101") in _lines(_check(tmp_path, source))


def test_a_helper_that_rebinds_the_payload_on_the_first_stage_returns_another_list(tmp_path):
    # INVALID: the first stage, rank 0 among it, hands back a filtered copy
    source = BROADCASTER.replace("payload = self.dist.tp_cp_broadcast(payload, root=0)",
                                 "payload = self.dist.tp_cp_broadcast(payload, root=0)\n"
                                 "            payload = (list(items), extras)")
    assert ("engine.py", 19, "CSL101") in _lines(_check(tmp_path, source))


def test_a_helper_returning_something_else_keeps_the_roots_list(tmp_path):
    # INVALID: the helper hands back a count, not the payload
    source = BROADCASTER.replace("            return payload\n", "            return len(items)\n")
    assert ("engine.py", 19, "CSL101") in _lines(_check(tmp_path, source))


def test_a_call_outside_a_test_of_the_root_keeps_the_callers_list(tmp_path):
    # INVALID: no test says this rank is the root; every rank keeps its own
    source = BROADCASTER.replace("            if self.dist.rank == 0:\n                _ =",
                                 "            if self.dist.rank >= 0:\n                _ =")
    assert ("engine.py", 19, "CSL101") in _lines(_check(tmp_path, source))


def test_a_shutdown_exit_cites_this_ranks_own_requests_not_the_fetch(tmp_path):
    # INVALID (the finding stays): this rank's own running list decides the
    # exit; the requests it fetched are rank 0's on every rank
    findings = _check(tmp_path, executor=EXECUTOR + LOOP)
    assert [(f.line, f.code, f.source) for f in findings] == [(39, "CSL102", "self.active_requests")]
