"""Calls that cannot raise where they stand are no rank-local failure.

An exception parts the ranks before a collective only where something can
raise it on some ranks.  A builtin container's method that does not fail on
its arguments (``pending.append(item)`` on a local list, ``options.get(key,
default)`` on ``**options``, ``put`` on a field made as an unbounded queue),
a condition's notify inside its own ``with``, and a tensor of a few numbers
written out in its factory's call cannot (``unfailing.cannot_raise``,
``raises._written_out``).  Each valid shape is paired with one where the call
can fail on one rank only, which must still be reported."""

import textwrap

from cslint.api import check_source

_RELAY = """
    import queue

    import torch.distributed as dist


    class Relay:
        def __init__(self, group):
            self.group = group
            self.outbox = queue.Queue()
            self.ready = []

        def step(self, item, **options):
            pending = []
            seen = {}
            rank = dist.get_rank(self.group)
            try:
                limit = options.get("limit", 4)
                if rank == 0:
                    {work}
                dist.barrier(group=self.group)
            except Exception:
                return None
            return pending, seen, limit
"""


def _relay(work, setup=""):
    source = textwrap.dedent(_RELAY).replace("{work}", work)
    if setup:
        source = source.replace("        self.ready = []", "        self.ready = []\n" + setup)
    return [(f.code, f.line, f.source) for f in check_source(source).findings]


def test_builtin_container_methods_cannot_fail_on_their_arguments():
    assert _relay("pending.append(item)") == []
    assert _relay('seen.setdefault("first", limit)') == []
    assert _relay("seen.pop(item, None)") == []
    assert _relay("self.outbox.put(item)") == []
    assert _relay("self.ready.append(item)") == []
    assert _relay("pending.insert(0, item)") == []


def test_a_method_that_can_fail_stays_a_rank_local_exception():
    # a dict's pop without a default raises KeyError where the key is missing
    assert _relay("seen.pop(item)") == [("CSL104", 21, "seen.pop(item)")]
    # extend iterates its argument, which may run any code
    assert _relay("pending.extend(item)") == [("CSL104", 21, "pending.extend(item)")]


def test_a_receiver_not_known_to_be_a_builtin_container_may_fail():
    # a parameter, or a field the file also sets to something else
    assert _relay("item.append(limit)") == [("CSL104", 21, "item.append(limit)")]
    assert _relay("self.ready.append(item)", setup="        self.ready = make_ready()") \
        == [("CSL104", 22, "self.ready.append(item)")]


def test_a_bounded_queue_put_may_wait_and_fail():
    assert _relay("self.outbox.put(item, timeout=1)", setup="        self.outbox = queue.Queue(maxsize=4)") \
        == [("CSL104", 22, "self.outbox.put(item, timeout=1)")]


_ENCODER = """
    import asyncio
    import threading

    import torch.distributed as dist

    wake = asyncio.Condition()
    done = threading.Condition()


    class Encoder:
        def __init__(self, group):
            self.group = group
            self.rank = dist.get_rank(group)

        async def encode(self, batch):
            try:
                if self.rank == 0:
                    async with {held}:
                        wake.notify_all()
                dist.broadcast_object_list(batch, src=0, group=self.group)
            except Exception:
                return None
            return batch

        def finish(self, batch):
            try:
                if self.rank == 0:
                    with done:
                        done.notify()
                dist.barrier(group=self.group)
            except Exception:
                return None
            return batch
"""


def test_a_condition_notified_inside_its_own_with_cannot_fail():
    assert check_source(textwrap.dedent(_ENCODER).replace("{held}", "wake")).findings == []


def test_notifying_a_condition_another_with_holds_may_fail():
    findings = check_source(textwrap.dedent(_ENCODER).replace("{held}", "done")).findings
    assert [(f.code, f.line) for f in findings] == [("CSL104", 21)]


_LOOP = """
    import torch
    import torch.distributed as dist


    class Loop:
        def __init__(self, trainer):
            self.trainer = trainer

        def share_stop(self, votes):
            try:
                flag = torch.tensor({data}, device=self.trainer.device)
                dist.broadcast(flag, src=0)
            except Exception:
                flag = torch.tensor([0], device=self.trainer.device)
            return flag.item() == 1
"""


def _loop(data):
    source = textwrap.dedent(_LOOP).replace("{data}", data)
    return [(f.code, f.line) for f in check_source(source).findings]


def test_a_tensor_of_a_few_numbers_written_out_fails_alike_on_every_rank():
    assert _loop('[1 if getattr(self.trainer, "stopping", False) else 0]') == []
    assert _loop("(0, -1, 2.5)") == []


def test_a_tensor_of_this_ranks_data_on_the_device_may_fail_there_alone():
    assert _loop("votes") == [("CSL104", 13)]
    assert _loop("[len(votes)] + votes") == [("CSL104", 13)]
    assert _loop("[v for v in votes]") == [("CSL104", 13)]


def test_a_name_a_case_pattern_or_a_walrus_may_bind_is_no_known_container():
    # ``case [pending]`` binds an element of ``item``: anything; a later case's own list
    # (a block read after the pattern's) once made it one
    assert _relay("match item:\n"
                  "                    case [pending]:\n"
                  "                        pass\n"
                  "                    case _:\n"
                  "                        pending = []\n"
                  "                pending.append(item)") == [("CSL104", 26, "pending.append(item)")]
    # a pattern or a ``:=`` may bind ``**options`` to something else than a dict
    assert _relay("match item:\n"
                  "                    case [*options]:\n"
                  "                        pass\n"
                  "                limit = options.get(1, 2)") == [("CSL104", 24, "limit = options.get(1, 2)")]
    assert _relay("if (options := item):\n"
                  "                    pass\n"
                  "                limit = options.get(1, 2)") == [("CSL104", 23, "limit = options.get(1, 2)")]
    # a ``:=`` binding another name leaves ``**options`` a dict (the walrus in the rank's arm is reported apart)
    assert [f for f in _relay("if (count := len(item)):\n"
                              "                    pass\n"
                              "                options.get(1, 2)") if f[0] == "CSL104"] == []
    # rebinding it by assignment was already followed
    assert _relay("if item:\n"
                  "                    options = item\n"
                  "                limit = options.get(1, 2)") == [("CSL104", 23, "limit = options.get(1, 2)")]
