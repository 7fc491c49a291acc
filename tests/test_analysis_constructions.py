"""A field of an object the reader sees built holds what that construction
passed (issue 14 §2.1, object-taint-spread; ``analysis/constructions.py``).

A field's table is one for every object of the class: a benchmark that
builds its requests from a prompt file it found on this node's disk made the
prompt of every request differ, also of a request a server builds from the
message every rank received alike.  Where the reader holds the call that
built the object, the field holds what the constructor stored from that
call's arguments, beside everything else written to the field (the
constructor's other stores, any method's).  Each VALID shape sits beside the
INVALID ones that must still be reported: the benchmark's own request, a
request read through a field (any construction's), a subclass whose
constructor runs its base's, a method that empties the field where this rank's
disk has a file, a constructor that stores this rank's own view.  A factory
every return of which builds the object (``return Request(*args, **kwargs)``)
hands its call's arguments to the constructor: by position, and by the
keyword of a parameter's name through its own ``**kwargs``."""

from package_findings import package_findings, write_package

REQUEST = """
    import os

    import torch.distributed as dist


    class Request:
        def __init__(self, rid, ids, params=None):
            self.rid = rid
            self.ids = ids
            self.params = params
            self.cached = os.path.exists(f"/cache/{rid}")

        def wait(self, group):
            dist.barrier(group=group)


    class Batch:
        def __init__(self, ids):
            self.ids = ids

        def drop_cached(self, path):
            if os.path.exists(path):
                self.ids = []


    class TracedRequest(Request):
        def __init__(self, rid, ids, trace):
            super().__init__(rid, ids)
            self.trace = trace
"""

BENCH = """
    import os

    import torch.distributed as dist

    from app.request import Batch, Request, TracedRequest


    def read_prompts(name):
        path = os.path.join("/local_disk", name)                # this node's own disk
        if not os.path.exists(path):
            return []
        with open(path) as handle:
            return handle.readlines()


    def run(path, group):
        prompts = read_prompts(path)
        req = Request(0, [len(p) for p in prompts])
        if len(req.ids) > 2:                                   # INVALID: this rank's own file
            dist.barrier(group=group)


    def trace(path, group):
        traced = TracedRequest(0, read_prompts(path), trace=True)
        return traced
"""

SERVER = """
    import torch.distributed as dist

    from app.request import Batch, Request, TracedRequest


    class Server:
        def __init__(self, group):
            self.group = group
            self.current = None

        def handle(self, message, tensor):                     # VALID: built from what every rank received
            req = Request(message.rid, message.ids, message.params)
            if len(req.ids) > 4:
                dist.all_reduce(tensor, group=self.group)
            if req.params is None:
                dist.all_reduce(tensor, group=self.group)

        def admit(self, message):
            self.current = Request(message.rid, message.ids)

        def step(self, tensor):                                # INVALID: a field's request, any construction's
            if len(self.current.ids) > 4:
                dist.all_reduce(tensor, group=self.group)

        def handle_traced(self, message, tensor):              # INVALID: the base's constructor runs too
            req = TracedRequest(message.rid, message.ids, message.trace)
            if len(req.ids) > 4:
                dist.all_reduce(tensor, group=self.group)

        def handle_refilled(self, message, path, tensor):      # INVALID: a method stores this rank's file
            batch = Batch(message.ids)
            batch.drop_cached(path)
            if len(batch.ids) > 4:
                dist.all_reduce(tensor, group=self.group)

        def handle_cached(self, message, tensor):              # INVALID: the constructor's own look
            req = Request(message.rid, message.ids)
            if req.cached:
                dist.all_reduce(tensor, group=self.group)
"""


def _findings(tmp_path, server=SERVER):
    package = write_package(tmp_path, "app", {"request.py": REQUEST, "bench.py": BENCH, "server.py": server})
    findings = package_findings(package)
    return sorted((f.function, f.condition) for f in findings)


def test_a_field_of_an_object_built_here_holds_what_this_call_passed(tmp_path):
    assert _findings(tmp_path) == [
        ("Server.handle_cached", "req.cached"),
        ("Server.handle_refilled", "len(batch.ids) > 4"),
        ("Server.handle_traced", "len(req.ids) > 4"),
        ("Server.step", "len(self.current.ids) > 4"),
        ("run", "len(req.ids) > 2"),
    ]


def test_the_object_built_from_this_rank_s_file_still_differs(tmp_path):
    server = SERVER.replace("req = Request(message.rid, message.ids, message.params)",
                            "req = Request(message.rid, read_prompts(message.path), message.params)").replace(
        "from app.request import Batch, Request, TracedRequest",
        "from app.bench import read_prompts\n    from app.request import Batch, Request, TracedRequest")
    found = _findings(tmp_path, server)
    assert ("Server.handle", "len(req.ids) > 4") in found
    assert ("Server.handle", "req.params is None") not in found  # the other argument's field stays alike


FACTORY_SERVER = """
    import torch.distributed as dist

    from app.bench import read_prompts
    from app.request import Request


    class Server:
        def __init__(self, group):
            self.group = group

        def _make(self, message, *args, **kwargs) -> Request:
            return Request(*args, **kwargs)

        def _make_or_none(self, message, *args, **kwargs) -> Request:
            if message.skip:
                return None
            return Request(*args, **kwargs)

        def handle(self, message, tensor):                     # VALID: a factory hands the call's arguments on
            req = self._make(message, message.rid, message.ids, params=message.params)
            if len(req.ids) > 4:
                dist.all_reduce(tensor, group=self.group)

        def handle_keywords(self, message, path, tensor):
            req = self._make(message, message.rid, ids=read_prompts(path), params=message.params)
            if len(req.ids) > 4:                               # INVALID: this rank's file, by keyword
                dist.all_reduce(tensor, group=self.group)
            if req.params is None:                             # VALID: another keyword, alike
                dist.all_reduce(tensor, group=self.group)

        def handle_positional(self, message, path, tensor):    # INVALID: this rank's file, by position
            req = self._make(message, message.rid, read_prompts(path))
            if len(req.ids) > 4:
                dist.all_reduce(tensor, group=self.group)

        def handle_maybe(self, message, tensor):               # INVALID: not every return builds the object
            req = self._make_or_none(message, message.rid, message.ids)
            if len(req.ids) > 4:
                dist.all_reduce(tensor, group=self.group)
"""


def test_an_object_a_factory_builds_holds_what_the_factory_s_call_passed(tmp_path):
    assert _findings(tmp_path, FACTORY_SERVER) == [
        ("Server.handle_keywords", "len(req.ids) > 4"),
        ("Server.handle_maybe", "len(req.ids) > 4"),
        ("Server.handle_positional", "len(req.ids) > 4"),
        ("run", "len(req.ids) > 2"),
    ]
