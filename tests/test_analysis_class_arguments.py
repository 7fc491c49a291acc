"""A class handed to a function that builds its objects (issue 14 §2.1):
``entry = entry_cls(rid=..., request=request, host=self.host)`` inside a
method every caller of which passes a class of the tree for ``entry_cls``.

Such a call is one of those classes' constructors: each argument reaches
the field it is stored in (``entry.host`` is this node's address), and the
object's other fields hold what was passed for them (``entry.request`` is
the request every rank was given), not every argument at once.  Where one
caller passes anything but a class (a function building the entry its own
way), the call stays a call of something unknown, made of all its arguments."""

import textwrap

from cslint.api import check_paths


INBOX = """
    import os
    import socket

    import torch
    import torch.distributed as dist


    def local_address():
        chosen = os.environ.get("NODE_ADDR")
        if chosen:
            return chosen
        try:
            return socket.gethostbyname(socket.gethostname())
        except OSError:
            return None


    class Entry:
        def __init__(self, rid, request, host):
            self.rid = rid
            self.request = request
            self.host = host


    class PushEntry(Entry):
        pass


    class RemoteEntry(Entry):
        def __init__(self, rid, request, host, engine):
            super().__init__(rid, request, host)
            self.engine = engine


    def swapped_entry(rid, request, host):
        return Entry(rid, host, request)


    class Inbox:
        def __init__(self, group, remote):
            self.group = group
            self.remote = remote
            self.host = local_address()
            self.pending = []
            self.loose = []
            self.last = None

        def _collect(self, requests, entry_cls, **extra):
            ready = []
            for request in requests:
                entry = self.last = entry_cls(rid=request.rid, request=request, host=self.host, **extra)
                self.pending.append(entry)
                ready.append(entry.request)
            dist.all_reduce(torch.zeros(len(ready)), group=self.group)
            return ready

        def collect(self, requests):
            if self.remote:
                return self._collect(requests, RemoteEntry, engine=object())
            return self._collect(requests, entry_cls=PushEntry)

        def _gather_any(self, requests, make):
            ready = []
            for request in requests:
                entry = make(rid=request.rid, request=request, host=self.host)
                self.loose.append(entry)
                ready.append(entry.request)
            dist.all_reduce(torch.zeros(len(ready)), group=self.group)
            return ready

        def gather_any(self, requests):
            if self.remote:
                return self._gather_any(requests, RemoteEntry)
            return self._gather_any(requests, swapped_entry)
"""

LOOP = """
    import torch
    import torch.distributed as dist

    from pkg.inbox import Inbox


    def pick(items, rank):
        return items[rank]


    class Loop:
        def __init__(self, group):
            self.group = group
            self.inbox = Inbox(group, remote=False)

        def step(self, requests):
            t = pick([torch.zeros(1)], 0)
            for request in self.inbox.collect(requests):
                if request.params.greedy:
                    dist.all_reduce(t, group=self.group)    # 21: every rank's own copy of the request
            if self.inbox.last.host.startswith("10."):
                dist.all_reduce(t, group=self.group)        # 23: this node's address
            for request in self.inbox.gather_any(requests):
                if request.params.greedy:
                    dist.all_reduce(t, group=self.group)    # 26: one caller builds the entry its own way
"""


# (``pick`` has a parameter named like a rank: the whole-tree pass reads
# every call of the tree when it starts, before any class handed in is asked)


def _tree(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "inbox.py").write_text(textwrap.dedent(INBOX))
    (package / "loop.py").write_text(textwrap.dedent(LOOP))
    return tmp_path


def _lines(tmp_path, name):
    result = check_paths([str(_tree(tmp_path))], report="per-site")
    return sorted(f.line for f in result.findings if f.path.endswith(name))


def test_an_object_built_by_a_class_every_caller_hands_in_holds_its_fields_apart(tmp_path):
    lines = _lines(tmp_path, "loop.py")
    assert 21 not in lines  # the request field holds the request, not the host name beside it
    assert 23 in lines  # the host field still holds this node's address


def test_a_caller_handing_in_anything_but_a_class_keeps_the_call_unknown(tmp_path):
    assert 26 in _lines(tmp_path, "loop.py")
