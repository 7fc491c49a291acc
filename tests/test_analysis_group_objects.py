"""A process group made with torch's classes (``ProcessGroup(store, rank,
size)``) is a group on every member that makes it: what it is made from is
held inside it (cslint/analysis/vocabulary.py GROUP_CLASSES), as a device
holds its index.  A coordinator whose leader binds the listening sockets and
publishes their ports while the other members read them back, and whose
group builder serves the store from the leader's socket and joins it as a
client elsewhere, still gives every member a group of the same size: a test
of that size no longer differs.  A group made on some ranks only, and the
rank a member holds in it, still do.  So does an object of a library class
imported under a private alias (``import CustomReduce as _CustomReduce``):
it holds the rank it was built with, as ``CustomReduce(...)`` does."""

import textwrap

from cslint.api import check_paths

_GROUPS = """
    import socket
    import struct

    from torch.distributed import PrefixStore, ProcessGroup, Store, TCPStore


    def allocate_ports(key: str, host: str, store: Store):
        socks = []
        ports = []
        for _ in range(2):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            s.listen()
            socks.append(s)
            ports.append(s.getsockname()[1])
        store.set(key, struct.pack("!2I", *ports))
        return ports, socks


    def fetch_ports(key: str, store: Store):
        return list(struct.unpack("!2I", store.get(key)))


    def join_store(host, port, rank, world_size):
        store = TCPStore(host, port, world_size, False)
        return store, rank, world_size


    def make_group(host, port, rank, world_size, listen_socket=None):
        if listen_socket is not None:
            store = TCPStore(host, port, world_size, True, listen_socket=listen_socket)
        else:
            store, rank, world_size = join_store(host, port, rank, world_size)
        prefix = PrefixStore(f"{host}:{port}", store)
        return ProcessGroup(prefix, rank, world_size)


    def sync_all(group):
        import torch.distributed as dist

        dist.barrier(group=group)
"""

_COORDINATOR = """
    import torch.distributed as dist

    from pkg.groups import allocate_ports, fetch_ports, make_group


    class Communicator:
        def __init__(self, cpu_group):
            self.cpu_group = cpu_group
            self.world_size = cpu_group.size()

        def all_reduce(self, t):
            if self.world_size == 1:
                return t
            dist.all_reduce(t, group=self.cpu_group)
            return t


    class Coordinator:
        def __init__(self, group_ranks, store, host, global_rank):
            self.rank = global_rank
            own = None
            for idx, ranks in enumerate(group_ranks):
                if self.rank in ranks:
                    self.ranks = ranks
                    self.world_size = len(ranks)
                    self.rank_in_group = ranks.index(self.rank)
                    key = f"group_{idx}"
                    if self.rank_in_group == 0:
                        ports, socks = allocate_ports(key, host, store)
                    else:
                        ports = fetch_ports(key, store)
                        socks = []
                    device_port, cpu_port = ports
                    own = make_group(
                        host,
                        cpu_port,
                        self.rank_in_group,
                        self.world_size,
                        listen_socket=socks[1] if socks else None,
                    )
            assert own is not None
            self.cpu_group = own
            self.comm = Communicator(self.cpu_group)

        def sync(self, t):
            if self.cpu_group.size() == 1:
                return t
            dist.all_reduce(t, group=self.cpu_group)
            return t
"""


def _findings(tmp_path, extra: str = "") -> tuple:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "groups.py").write_text(textwrap.dedent(_GROUPS))
    source = textwrap.dedent(_COORDINATOR) + textwrap.dedent(extra)
    (package / "coordinator.py").write_text(source)
    found = sorted((f.code, f.line) for f in check_paths([str(package)], report="per-site").findings)
    return found, source.splitlines()


def _line(lines: list, text: str) -> int:
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_the_size_of_a_group_the_leader_serves_and_the_others_join_is_agreed(tmp_path):
    found, _ = _findings(tmp_path)
    assert found == []


def test_a_group_made_on_the_leader_only_still_differs(tmp_path):
    found, lines = _findings(tmp_path, """
        from torch.distributed import ProcessGroup


        class LeaderGroup:
            def __init__(self, store, rank, size):
                self.group = ProcessGroup(store, 0, size) if rank == 0 else None

            def sync(self, t):
                if self.group is not None:
                    dist.all_reduce(t)
                return t
    """)
    assert found == [("CSL101", _line(lines, "dist.all_reduce(t)"))]


def test_the_rank_a_member_holds_in_the_group_still_differs(tmp_path):
    found, lines = _findings(tmp_path, """
        from torch.distributed import ProcessGroup


        class Ranked:
            def __init__(self, store, rank, size):
                self.group = ProcessGroup(store, rank, size)

            def sync(self, t):
                if self.group.rank() == 0:
                    dist.barrier(group=self.group)
                return t
    """)
    assert found == [("CSL101", _line(lines, "dist.barrier(group=self.group)"))]


_ALIASED = """
    import torch.distributed as dist


    class FastReduce:
        def __init__(self, group):
            from fastlib.reduce import CustomReduce as _CustomReduce

            self.group = group
            self._impl = BUILT

        def all_reduce(self, t):
            if self._impl.should_run(t):
                return self._impl.run(t)
            dist.all_reduce(t, group=self.group)
            return t
"""


def _aliased(tmp_path, built: str) -> list:
    (tmp_path / "fast.py").write_text(textwrap.dedent(_ALIASED).replace("BUILT", built))
    return sorted((f.code, f.line) for f in check_paths([str(tmp_path / "fast.py")], report="per-site").findings)


def test_an_object_of_a_library_class_under_a_private_alias_holds_the_rank_it_was_built_with(tmp_path):
    assert _aliased(tmp_path, "_CustomReduce(group, dist.get_rank())") == []


def test_what_a_private_helper_function_returns_from_the_rank_still_differs(tmp_path):
    line = _line(textwrap.dedent(_ALIASED).splitlines(), "dist.all_reduce(t, group=self.group)")
    assert _aliased(tmp_path, "_custom_reduce(group, dist.get_rank())") == [("CSL102", line)]
