"""A field declared with a library type in its assignment holds no class of
the tree (issue 14, cause 5): ``self.policy: Any = registry[name]`` or
``self.channel: socket.socket = registry[name]`` is typed as the parameter
path types ``def __init__(self, policy: Any): self.policy = policy`` -- a
standard-library type, or an annotation the file cannot tell (``object``),
says the field is something else, so a call of a method on it is never the
tree's one method of that name.  A field declared with a class of the tree
is still followed into that class."""

import textwrap

from cslint.api import check_paths


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def _findings(tmp_path):
    _write(tmp_path / "pkg" / "__init__.py", "")
    _write(tmp_path / "pkg" / "parts.py", """
        import torch.distributed as dist


        class Policy:
            def act_on_requests(self, reqs):
                if reqs:
                    dist.all_reduce(reqs[0])            # 8: never (the field is declared `Any`)
                return reqs


        class Channel:
            def drain_requests(self, reqs):
                if reqs:
                    dist.broadcast(reqs[0], src=0)      # 15: never (the field is a socket.socket)
                return reqs


        class Holder:
            def hold_requests(self, reqs):
                if reqs:
                    dist.barrier()                      # 22: never (the field is declared `object`)
                return reqs


        class Worker:
            def work_on_requests(self, reqs):
                if reqs:
                    dist.all_gather_object([None], reqs)  # 29: through a field declared `Worker`
                return reqs


        class Mirror:
            def mirror_requests(self, reqs):
                if reqs:
                    dist.all_reduce(reqs[0])            # 36: through a field assigned a registry entry
                return reqs
    """)
    _write(tmp_path / "pkg" / "loops.py", """
        import socket
        from typing import Any, Optional

        import torch.distributed as dist

        from .parts import Worker


        class Loop:
            def __init__(self, registry, name):
                self.policy: Any = registry[name]
                self.channel: socket.socket = registry[name]
                self.holder: "object" = registry[name]
                self.worker: Optional[Worker] = registry[name]
                self.mirror = registry[name]

            def step(self, queue):
                mine = [t for t in queue if dist.get_rank() == 0]
                self.policy.act_on_requests(mine)
                self.channel.drain_requests(mine)
                self.holder.hold_requests(mine)
                self.worker.work_on_requests(mine)
                self.mirror.mirror_requests(mine)
    """)
    result = check_paths([str(tmp_path / "pkg")], report="per-site")
    return sorted((f.path.rsplit("/", 1)[-1], f.line) for f in result.findings)


def test_a_field_declared_with_a_library_type_is_no_class_of_the_tree(tmp_path):
    found = _findings(tmp_path)
    # VALID: a field declared with a class of the tree is followed into it; an undeclared field whose
    # value tells nothing still reaches the tree's one method of that name
    assert ("parts.py", 29) in found
    assert ("parts.py", 36) in found
    # INVALID: `Any`, a standard-library class and `object` say the field holds no class of the tree,
    # though each method name is the tree's one method of that name
    assert ("parts.py", 8) not in found
    assert ("parts.py", 15) not in found
    assert ("parts.py", 22) not in found
