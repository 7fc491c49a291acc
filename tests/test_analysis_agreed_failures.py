"""Exceptions and agreements the SGLang multimodal input path relies on
(issue 14, the CUDA IPC reconstruction cluster): each VALID shape sits
beside the INVALID one that must still be reported.

- A handler that names only classes its own file defines (``except
  InputError:``) catches none of what library code, builtins or local work
  raise: only the tree's own ``raise`` statements of such a class reach it
  (``raises.py``).  A callee that re-raises a failed read as it is does not
  send the rank into that handler; one that turns it into an ``InputError``
  does.
- ``if not (dist.is_initialized() and self.dp_tp_cpu_group is not None):
  return [local_error]``: the fallback runs only where the group is not set
  up, so the process has no peers in it (``grouptests.single_rank_side``); a
  setting in its place decides nothing of the kind.
- A method of the class that issues a collective itself keeps its
  arguments bound past the nesting limit (``AtomBuilder.call``, and when a
  later call flattens it), so what it agrees stays agreed.
"""

import textwrap

from cslint.api import check_paths

HANDLERS = """
    import time
    import torch
    import torch.distributed as dist


    class InputError(RuntimeError):
        pass


    def read_features(item):
        with open(item.path) as handle:
            return handle.read()


    def materialise(items):
        try:
            for item in items:
                item.data = read_features(item)
        except BaseException:
            for item in items:
                item.data = None
            raise
        return items


    def checked(items):
        try:
            return materialise(items)
        except OSError as error:
            raise InputError(str(error))


    class Worker:
        def __init__(self, group, limit):
            self.tp_group = group
            self.limit = limit
            self.queue = []

        def prepare(self, req):
            if req.bad:
                raise InputError("malformed request")
            if req.shared:
                box = [req.items]
                dist.broadcast_object_list(box, src=0, group=self.tp_group)
                return box[0]
            return materialise(req.items)

        def prepare_checked(self, req):
            if req.shared:
                box = [req.items]
                dist.broadcast_object_list(box, src=0, group=self.tp_group)
                return box[0]
            return checked(req.items)

        def handle(self, req, tensor):
            try:
                self.prepare(req)
            except InputError:
                return None
            dist.all_reduce(tensor, group=self.tp_group)          # VALID: only the request's own test raises InputError
            return tensor

        def handle_any(self, req, tensor):
            try:
                self.prepare(req)
            except Exception:
                return None
            dist.all_reduce(tensor, group=self.tp_group)          # INVALID: reading this rank's files may fail
            return tensor

        def handle_checked(self, req, tensor):
            try:
                self.prepare_checked(req)
            except InputError:
                return None
            dist.all_reduce(tensor, group=self.tp_group)          # INVALID: a failed read becomes an InputError
            return tensor
"""

GROUP_FALLBACK = """
    import torch
    import torch.distributed as dist


    def decode_item(item):
        with open(item.path) as handle:
            item.data = handle.read()


    class Gatherer:
        def __init__(self, group, gather_errors):
            self.dp_tp_cpu_group = group
            self.gather_errors = gather_errors

        def _agree(self, local_error):
            if not (dist.is_initialized() and self.dp_tp_cpu_group is not None):
                return [local_error]
            errors = [None] * dist.get_world_size(group=self.dp_tp_cpu_group)
            dist.all_gather_object(errors, local_error, group=self.dp_tp_cpu_group)
            return errors

        def _agree_if_asked(self, local_error):
            if not (dist.is_initialized() and self.gather_errors):
                return [local_error]
            errors = [None] * dist.get_world_size(group=self.dp_tp_cpu_group)
            dist.all_gather_object(errors, local_error, group=self.dp_tp_cpu_group)
            return errors

        def _decode(self, item):
            try:
                decode_item(item)
            except OSError as error:
                return str(error)
            return None

        def run(self, item, tensor):
            errors = self._agree(self._decode(item))
            if any(errors):
                return None
            dist.all_reduce(tensor, group=self.dp_tp_cpu_group)          # VALID: no group, no peers to disagree with
            return tensor

        def run_if_asked(self, item, tensor):
            errors = self._agree_if_asked(self._decode(item))
            if any(errors):
                return None
            dist.all_reduce(tensor, group=self.dp_tp_cpu_group)          # INVALID: a setting skips the gather
            return tensor
"""

BOUND_HELPER = """
    import time
    import torch
    import torch.distributed as dist


    class Receiver:
        def __init__(self, group, source):
            self.tp_group = group
            self.source = source

        def _pull(self):
            return self.source.poll()

        def _filter(self, reqs):
            return [r for r in reqs if r is not None]

        def _share(self, reqs, extra):
            box = [reqs + extra]
            dist.broadcast_object_list(box, src=0, group=self.tp_group)
            return box[0]

        def _local(self, reqs, extra):
            return reqs + extra

        def _post(self, reqs):
            return list(reqs)

        def receive(self, extra):
            reqs = self._pull()
            reqs = self._filter(reqs)
            reqs = self._share(reqs, extra)
            reqs = self._post(reqs)
            return reqs

        def receive_local(self, extra):
            reqs = self._pull()
            reqs = self._filter(reqs)
            reqs = self._local(reqs, extra)
            reqs = self._post(reqs)
            return reqs

        def step(self, tensor):
            late = [time.monotonic()]
            reqs = self.receive(late)
            if reqs:
                dist.all_reduce(tensor, group=self.tp_group)          # VALID: the broadcast agrees what was added

        def step_local(self, tensor):
            late = [time.monotonic()]
            reqs = self.receive_local(late)
            if reqs:
                dist.all_reduce(tensor, group=self.tp_group)          # INVALID: this rank's clock is added as it is
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def _flagged(tmp_path, source):
    source = textwrap.dedent(source)
    (tmp_path / "module.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return source, sorted({f.line for f in findings if f.path.endswith("module.py")})


def test_a_handler_of_the_files_own_class_catches_only_the_trees_raises_of_it(tmp_path):
    source, flagged = _flagged(tmp_path, HANDLERS)
    assert flagged == _marked(source, "INVALID")
    assert _marked(source, "VALID")


def test_a_fallback_taken_only_where_the_group_is_not_set_up_carries_nothing_that_differs(tmp_path):
    source, flagged = _flagged(tmp_path, GROUP_FALLBACK)
    assert flagged == _marked(source, "INVALID")
    assert _marked(source, "VALID")


def test_an_agreement_method_keeps_its_arguments_bound_past_the_nesting_limit(tmp_path):
    source, flagged = _flagged(tmp_path, BOUND_HELPER)
    assert flagged == _marked(source, "INVALID")
    assert _marked(source, "VALID")
