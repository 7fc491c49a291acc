"""What follows a test whose arm can only raise, and a copy made by ``dataclasses.replace`` (issue 14).

A context-parallel manager splits the batch by its rank, checks the local size against its buffer
(``if n > capacity: raise RuntimeError(...)``) and keeps a copy of the batch with the local fields
replaced (``dataclasses.replace``).  A later step gathers over the group unless nothing was
kept.  An arm that can only raise an error ends the process (a crash the launcher tears down, not
a rank-local skip), so the ranks that go on all passed the check: the test decides neither the
other arm nor what follows, in a function the analysis summarises as in one it walks in depth.
Inside a ``try`` whose handler may catch it, or where the arm returns, the test still decides.
A copy with some fields replaced is an object of the batch's class on every rank: what the new
fields hold is its contents, never its None-ness."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


def _marked(source):
    return [n for n, text in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported" in text]


MANAGER = """
    from dataclasses import dataclass, replace

    import torch.distributed as dist


    @dataclass
    class Batch:
        num_reqs: int
        req_ids: list


    class Manager:
        def __init__(self, rank, capacity):
            self.rank = rank
            self.capacity = capacity
            self.checked = None
            self.otherwise = None
            self.handled = None
            self.returned = None
            self.copied = None
            self.picked = None

        def check(self, batch):
            mine = batch.req_ids[self.rank::2]
            if len(mine) > self.capacity:
                raise RuntimeError("local batch exceeds the buffer")
            self.checked = batch

        def check_else(self, batch):
            mine = batch.req_ids[self.rank::2]
            if len(mine) <= self.capacity:
                self.otherwise = batch
            else:
                raise RuntimeError("local batch exceeds the buffer")

        def check_handled(self, batch):
            mine = batch.req_ids[self.rank::2]
            try:
                if len(mine) > self.capacity:
                    raise RuntimeError("local batch exceeds the buffer")
                self.handled = batch
            except RuntimeError:
                pass

        def check_returned(self, batch):
            mine = batch.req_ids[self.rank::2]
            if len(mine) > self.capacity:
                return
            self.returned = batch

        def partition(self, batch):
            mine = batch.req_ids[self.rank::2]
            self.copied = replace(batch, num_reqs=len(mine), req_ids=mine)

        def partition_picked(self, batch):
            mine = batch.req_ids[self.rank::2]
            self.picked = batch if mine else None

        def gather_checked(self, out):
            if self.checked is None:
                return None
            dist.all_gather_object(out, self.checked.num_reqs)

        def gather_otherwise(self, out):
            if self.otherwise is None:
                return None
            dist.all_gather_object(out, self.otherwise.num_reqs)

        def gather_handled(self, out):
            if self.handled is None:
                return None
            dist.all_gather_object(out, self.handled.num_reqs)  # reported: the handler catches the raise

        def gather_returned(self, out):
            if self.returned is None:
                return None
            dist.all_gather_object(out, self.returned.num_reqs)  # reported: the arm returns

        def gather_copied(self, out):
            if self.copied is None:
                return None
            dist.all_gather_object(out, self.copied.num_reqs)

        def gather_picked(self, out):
            if self.picked is None:
                return None
            dist.all_gather_object(out, self.picked.num_reqs)  # reported: None on the ranks with no share
"""


def test_a_raise_only_arm_decides_nothing_after_it_and_a_replaced_copy_is_never_none():
    assert _lines(MANAGER) == _marked(MANAGER)


STAGES = """
    import torch.distributed as dist


    class Stage:
        def __init__(self, cfg, pp):
            self.pp = pp
            if cfg.draft and pp.is_last_rank:
                if cfg.kind == "small":
                    self.drafter = 1
                elif cfg.kind == "large":
                    self.drafter = 2
                else:
                    raise ValueError(cfg.kind)
            self.done = [False] * cfg.slots
            if cfg.draft and pp.is_last_rank:
                if cfg.kind == "small":
                    self.helper = 1
                else:
                    return
            self.left = [False] * cfg.slots
            try:
                if cfg.draft and pp.is_last_rank:
                    if cfg.kind == "small":
                        self.helper = 1
                    else:
                        raise ValueError(cfg.kind)
            except ValueError:
                pass
            self.tried = [False] * cfg.slots

        def send_done(self, t, n):
            if not all(self.done[:n]):
                dist.broadcast(t, src=0, group=self.pp.device_group)

        def send_left(self, t, n):
            if not all(self.left[:n]):
                dist.broadcast(t, src=0, group=self.pp.device_group)  # reported: the nested arm returns

        def send_tried(self, t, n):
            if not all(self.tried[:n]):
                dist.broadcast(t, src=0, group=self.pp.device_group)  # reported: the handler catches the raise
"""


def test_a_raise_only_arm_nested_in_a_stage_test_decides_nothing_after_it():
    # the ``else: raise`` of a configuration chain inside a last-stage arm:
    # the stages that go on all assign what follows; a nested ``return`` or
    # a handler around the chain still sends the last stage past it
    assert _lines(STAGES) == _marked(STAGES)
