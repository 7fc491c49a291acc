"""Whether a statement raised decides only the code of the handlers it
raises into (issue 14 §2.4, a worker thread's loop).

A worker loop agrees on its next command by a broadcast, handles it inside
an outer ``try`` whose handler leaves the loop, and inside that binds a
fallback in an inner handler of its own.  The ranks that are still looping
all got past every statement of the earlier passes: which of those might
have raised into the outer handler decides nothing about what the inner
handler binds.  What the inner handler's own ``try`` may raise still does
(``Dataflow._deciders_of``).  Each VALID shape sits beside the INVALID one
that must still be reported."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import torch
    import torch.distributed as dist

    import hoststore


    class Pool:
        def __init__(self):
            self.released = 0

        def release(self, count):
            self.released = count


    class Worker:
        def __init__(self, group, tp_group):
            self.group = group
            self.tp_group = tp_group
            self.pool = Pool()

        def loop(self):                                        # VALID
            while True:
                commands = [None]
                try:
                    dist.broadcast_object_list(commands, src=0, group=self.group)
                    command = commands[0]
                    if command is None:
                        return
                    try:
                        hits = int(command.hits)
                    except ValueError:
                        hits = 0
                    self.pool.release(hits)
                    command.marker = hoststore.mark(command)
                except Exception:
                    return

        def check(self, tensor):
            if self.pool.released > 0:
                dist.all_reduce(tensor, group=self.tp_group)


    class LocalPool:
        def __init__(self):
            self.released = 0

        def release(self, count):
            self.released = count


    class LocalWorker:
        def __init__(self, group, tp_group):
            self.group = group
            self.tp_group = tp_group
            self.pool = LocalPool()

        def loop(self):                                        # INVALID: the inner try fails locally
            while True:
                commands = [None]
                try:
                    dist.broadcast_object_list(commands, src=0, group=self.group)
                    command = commands[0]
                    if command is None:
                        return
                    try:
                        hits = hoststore.query(command)
                    except Exception:
                        hits = 0
                    self.pool.release(hits)
                except Exception:
                    return

        def check(self, tensor):
            if self.pool.released > 0:
                dist.all_reduce(tensor, group=self.tp_group)
"""


def test_an_earlier_pass_raising_into_the_outer_handler_decides_nothing_in_the_inner_one():
    findings = check_source(textwrap.dedent(SOURCE), report="per-site").findings
    assert sorted(f.function for f in findings if f.function.endswith(".check")) == ["LocalWorker.check"], \
        [(f.function, f.line, f.message) for f in findings]
