"""A name every binding of which is the same call holds what that call
returns, whichever binding ran last (issue 14, chains must be true).

A server binds a socket made first in the function's own body; when the
bind fails on this rank, the handler closes it and makes another with the
same call.  Which ranks took the handler decides nothing about the socket:
every rank holds a socket that call made.  A handler that binds the name to
anything else (None, a call reading the name itself) or a call whose
arguments this rank chose still differs.  Each VALID shape sits beside the
INVALID one that must still be reported."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import socket

    import torch.distributed as dist

    import netlib


    def wrap(sock):
        return sock


    def serve(kind, endpoint, group):                      # VALID
        sock = socket.socket(kind)
        for attempt in range(3):
            try:
                sock.bind(endpoint)
                break
            except OSError:
                sock.close()
                sock = socket.socket(kind)
        if sock is None:
            return
        dist.barrier(group=group)


    def serve_once(kind, endpoint, group):                 # VALID
        sock = socket.socket(kind)
        try:
            sock.bind(endpoint)
        except OSError:
            sock = socket.socket(kind)
        if sock is None:
            return
        dist.barrier(group=group)


    def serve_none(kind, endpoint, group):                 # INVALID
        sock = socket.socket(kind)
        for attempt in range(3):
            try:
                sock.bind(endpoint)
                break
            except OSError:
                sock.close()
                sock = None
        if sock is None:
            return
        dist.barrier(group=group)


    def serve_wrapped(kind, endpoint, group):              # INVALID
        sock = socket.socket(kind)
        for attempt in range(3):
            try:
                sock.bind(endpoint)
                break
            except OSError:
                sock = wrap(sock)
        if sock is None:
            return
        dist.barrier(group=group)


    def serve_port(endpoint, group):                       # INVALID
        port = 5000
        sock = netlib.listener(port)
        try:
            sock.bind(endpoint)
        except OSError:
            port = 5000 + dist.get_rank()
            sock = netlib.listener(port)
        if sock is None:
            return
        dist.barrier(group=group)
"""


def test_a_name_rebuilt_by_the_same_call_takes_no_test_deciding_which_binding_ran():
    findings = check_source(textwrap.dedent(SOURCE), report="per-site").findings
    assert sorted(f.function for f in findings) == ["serve_none", "serve_port", "serve_wrapped"], \
        [(f.function, f.line, f.message) for f in findings]
