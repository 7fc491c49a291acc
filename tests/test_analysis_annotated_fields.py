"""A field assigned a constructor parameter holds what the parameter's
annotation names (issue 14, recall): ``def __init__(self, receiver:
Receiver): self.receiver = receiver`` types the field as a construction
``self.receiver = Receiver()`` does, so ``self.receiver.recv(local)`` passes
``local`` into ``Receiver.recv`` -- a class of the same file by its bare name,
an imported one, each member of ``Optional[X]`` and ``X | None`` (written out
or as a string).  An annotation the file cannot tell (a name neither defined
there nor imported) types the field as nothing of the tree: a same-named class
of another module is not taken, nor a method found by its name alone; nor is
a library class's method one of the tree's, nor what a field declared ``Any``
holds."""

import textwrap

from cslint.api import check_paths


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def _findings(tmp_path):
    _write(tmp_path / "pkg" / "__init__.py", "")
    _write(tmp_path / "pkg" / "parts.py", """
        import torch.distributed as dist


        class Receiver:
            def recv(self, reqs):
                if reqs:
                    dist.all_reduce(reqs[0])            # 8: through Optional[Receiver]
                return reqs


        class Sender:
            def push(self, reqs):
                if reqs:
                    dist.broadcast(reqs[0], src=0)      # 15: through "Sender | None"
                return reqs


        class Stray:
            def absorb_requests(self, reqs):
                if reqs:
                    dist.barrier()                      # 22: never (its class is not imported where typed)
                return reqs


        class Policy:
            def act_on_requests(self, reqs):
                if reqs:
                    dist.all_reduce(reqs[0])            # 29: never (the field is declared `Any`)
                return reqs


        class Built:
            def take_requests(self, reqs):
                if reqs:
                    dist.all_gather_object([None], reqs)  # 36: through a construction (as before)
                return reqs
    """)
    _write(tmp_path / "pkg" / "loops.py", """
        from typing import Any, Optional

        import torch.distributed as dist
        from zmq import Socket

        from .parts import Built, Receiver, Sender


        class LocalReceiver:
            def recv(self, reqs):
                if reqs:
                    dist.all_reduce(reqs[0])            # 13: through a class of this file
                return reqs


        class Loop:
            def __init__(self, local: LocalReceiver, receiver: Optional[Receiver] = None,
                         sender: "Sender | None" = None, stray: "Stray" = None, socket: Socket = None,
                         policy: Any = None):
                self.local = local
                self.receiver = receiver
                self.sender = sender
                self.stray = stray
                self.socket = socket
                self.policy = policy
                self.built = Built()

            def step(self, queue):
                mine = [t for t in queue if dist.get_rank() == 0]
                self.local.recv(mine)
                self.receiver.recv(mine)
                self.sender.push(mine)
                self.stray.absorb_requests(mine)
                self.socket.absorb_requests(mine)
                self.policy.act_on_requests(mine)
                self.built.take_requests(mine)
    """)
    result = check_paths([str(tmp_path / "pkg")], report="per-site")
    return sorted((f.path.rsplit("/", 1)[-1], f.line) for f in result.findings)


def test_an_annotated_parameter_stored_in_a_field_types_it(tmp_path):
    found = _findings(tmp_path)
    # VALID: the rank-local list reaches each class the annotations name, as it reaches the constructed one
    assert ("loops.py", 13) in found  # a class of the same file, by its bare name
    assert ("parts.py", 8) in found  # Optional[Receiver], imported
    assert ("parts.py", 15) in found  # "Sender | None", a string annotation
    assert ("parts.py", 36) in found  # the construction next to them stays reported
    # INVALID: `Stray` is not imported into loops.py (a same-named class of another module is not
    # taken), and a zmq Socket is no class of the tree, though `absorb_requests` is the tree's one method
    # of that name; nor is a field declared `Any` (a standard-library type) the one class with
    # `act_on_requests`
    assert ("parts.py", 22) not in found
    assert ("parts.py", 29) not in found
