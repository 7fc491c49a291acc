"""A call every way out of a decision makes once (issue 14 §2.1,
object-taint-spread: a request handler's early exits).

A handler of requests that ends each early exit the way it ends its last
statement, handing the request on once whatever became of it, calls the
callee on every rank: the tests choosing the exit decide what it is handed,
not whether (nor how often) it runs, so what the callee writes is written on
every rank (:mod:`cslint.analysis.exitcalls`).  A ``try`` whose handler ends
the same way is read alike.  An exit that hands nothing on, or hands the
request on twice, still parts the ranks.  Each VALID shape sits beside the
INVALID one that must still be reported."""

from cslint.api import check_source

QUEUE = """
class {name}:
    def __init__(self, tp_group, pp_group, limit):
        self.tp_group = tp_group
        self.pp_group = pp_group
        self.limit = limit
        self.queue = []

    def enqueue(self, item):
        if self.limit < 0:
            dist.barrier(group=self.pp_group)
        self.queue.append(item)

    def step(self, tensor):
        if self.queue:
            dist.all_reduce(tensor, group=self.tp_group)

    def admit(self, item):
{admit}
"""

EVERY_EXIT = """
        if time.monotonic() > item.deadline:
            item.reject("late")
            self.enqueue(item)
            return
        if len(item.tokens) > self.limit:
            item.reject("too long")
            self.enqueue(item)
            return
        item.accepted = True
        self.enqueue(item)
"""

HANDLED_EXIT = """
        try:
            item.features = featurestore.fetch(item.key)
        except OSError:
            item.reject("unreadable")
            self.enqueue(item)
            return
        item.accepted = True
        self.enqueue(item)
"""

SKIPPING_EXIT = """
        if time.monotonic() > item.deadline:
            item.reject("late")
            return
        item.accepted = True
        self.enqueue(item)
"""

TWICE_EXIT = """
        if time.monotonic() > item.deadline:
            self.enqueue(item)
            self.enqueue(item.retry())
            return
        self.enqueue(item)
"""

def _source() -> str:
    head = "import time\n\nimport torch.distributed as dist\n\nimport featurestore\n"
    parts = [head]
    for name, admit in (("EveryExit", EVERY_EXIT), ("HandledExit", HANDLED_EXIT), ("SkippingExit", SKIPPING_EXIT),
                        ("TwiceExit", TWICE_EXIT)):
        parts.append(QUEUE.format(name=name, admit=admit.strip("\n")))
    return "\n".join(parts)


def test_a_call_every_exit_makes_once_is_made_on_every_rank():
    findings = check_source(_source(), report="per-site").findings
    steps = sorted({f.function for f in findings if f.function.endswith(".step")})
    assert steps == ["SkippingExit.step", "TwiceExit.step"], \
        [(f.function, f.line, f.message) for f in findings]
