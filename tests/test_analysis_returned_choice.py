"""A rank-local exception whose handler only changes which value a function
returns (issue 14): what the later uses of that value really read.

A loader that falls back to another way of building the same object when a
local socket is missing returns an object on every rank; a function declaring
one class as its result (``-> nn.Module``) hands back an object of that class
on every path, so the test that chose the path decides which object (its
contents, as a constructor's arguments do), never its None-ness or kind.  A
function that may return None, or declares nothing, still carries the whole
choice.  A receiver named by a module the function imports itself (``import
socket as socket_mod``) is that module's object, never a project class."""

import textwrap

from cslint.api import check_source


def _lines(source, **kw):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings)


LOADER = """
    import socket
    import torch.distributed as dist
    from torch import nn


    class Loader:
        def fetch(self, path):
            sock = socket.socket(socket.AF_UNIX)
            try:
                sock.connect(path)
            except FileNotFoundError:
                return None
            return {"entries": sock.recv(10)}

        def load_model(self, config) -> nn.Module:
            data = self.fetch(config.path)
            if data is None:
                return build(config)
            return fill(build(config), data["entries"])

        def load_unannotated(self, config):
            data = self.fetch(config.path)
            if data is None:
                return build(config)
            return fill(build(config), data["entries"])

        def load_optional(self, config) -> "nn.Module | None":
            data = self.fetch(config.path)
            if data is None:
                return None
            return fill(build(config), data["entries"])


    def build(config):
        return config.model_cls(config)


    def fill(model, entries):
        model.load(entries)
        return model


    class Runner:
        def __init__(self, config):
            self.model = Loader().load_model(config)
            self.plain = Loader().load_unannotated(config)
            self.maybe = Loader().load_optional(config)

        def step(self, t):
            if self.model.gather:
                dist.all_reduce(t)          # which model was built, not its configuration
            if self.model is None:
                dist.all_reduce(t)          # declared: never None

        def step_plain(self, t):
            if self.plain.gather:
                dist.all_reduce(t)          # reported: nothing says both paths build alike

        def step_maybe(self, t):
            if self.maybe is None:
                dist.all_reduce(t)          # reported: None where the socket is missing
"""


def test_a_declared_result_chosen_by_a_local_failure_keeps_its_structure():
    assert _lines(LOADER) == [58, 62]


def test_what_the_chosen_object_computes_still_differs():
    lines = _lines("""
        import socket
        import torch.distributed as dist
        from torch import nn

        def fetch(path):
            sock = socket.socket()
            try:
                sock.connect(path)
            except OSError:
                return None
            return sock.recv(10)

        def load(config) -> nn.Module:
            data = fetch(config.path)
            if data is None:
                return config.disk_model()
            return config.cached_model(data)

        def step(config, t):
            model = load(config)
            if model.data.sum() > 0:
                dist.all_reduce(t)          # reported: what the chosen object holds
            if model == config.other:
                dist.all_reduce(t)          # reported: which object it is
    """)
    assert lines == [23, 25]


def test_a_declared_library_scalar_keeps_the_choice():
    lines = _lines("""
        import socket
        import torch.distributed as dist

        def reachable(path) -> bool:
            sock = socket.socket()
            try:
                sock.connect(path)
            except OSError:
                return False
            return True

        def step(path, t):
            if reachable(path):
                dist.all_reduce(t)          # reported: the declared bool is the choice
    """)
    assert lines == [15]


RECEIVERS = """
    import torch.distributed as dist

    class Peer:
        def connect(self, t):
            dist.all_reduce(t)

    def rank_local():
        return dist.get_rank() == 0

    def aliased(addr):
        import socket as socket_mod
        sock = socket_mod.socket(socket_mod.AF_UNIX, socket_mod.SOCK_STREAM)
        if rank_local():
            sock.connect(addr)              # a socket, never Peer.connect

    def plain(addr):
        import socket
        sock = socket.socket()
        if rank_local():
            sock.connect(addr)              # a socket

    def rebound(addr, make):
        import socket as sm
        sm = make()
        sock = sm.socket()
        if rank_local():
            sock.connect(addr)              # reported: sm is no longer the module
"""


def test_a_module_imported_in_the_function_types_its_objects():
    assert _lines(RECEIVERS) == [28]


STATE_SWITCH = """
    from contextlib import contextmanager
    import torch.distributed as dist


    class Comm:
        def __init__(self):
            self.disabled = False

        @contextmanager
        def change_state(self, enable=True):
            old = self.disabled
            self.disabled = not enable
            try:
                yield
            finally:
                self.disabled = old


    class Switch:
        def __init__(self):
            self.disabled = False

        @contextmanager
        def change_state(self, enable=True):
            self.disabled = not enable
            yield


    class Coordinator:
        def __init__(self):
            self.comm = Comm()
            self.switch = Switch()

        def reduce(self, t):
            if dist.get_rank() == 0:
                with self.comm.change_state(enable=True):
                    t = t + 1
            if not self.comm.disabled:
                dist.all_reduce(t)          # put back past the with: as before on every rank

        def reduce_switched(self, t):
            if dist.get_rank() == 0:
                with self.switch.change_state(enable=False):
                    t = t + 1
            if not self.switch.disabled:
                dist.all_reduce(t)          # reported: set on rank 0 alone and left so
"""


def test_a_field_a_context_manager_puts_back_keeps_its_value_past_the_block():
    assert _lines(STATE_SWITCH) == [47]


BY_NAME_ARITY = """
    import torch.distributed as dist


    class CustomAllreduce:
        def register_buffer(self, inp):
            dist.broadcast_object_list([inp])


    def rank_local():
        return dist.get_rank() == 0


    def set_tensor(model, name, tensor):
        obj = model
        for part in name.split("."):
            obj = getattr(obj, part)
        if rank_local():
            obj.register_buffer(name, tensor)      # two arguments: a module's, not CustomAllreduce's


    def register(comm, t):
        if rank_local():
            comm.register_buffer(t)                 # reported: one argument, it may be the one


    def register_star(comm, args):
        if rank_local():
            comm.register_buffer(*args)             # reported: unpacked, it may be one
"""


def test_a_method_found_by_name_alone_must_take_the_arguments_passed():
    assert _lines(BY_NAME_ARITY) == [24, 29]
