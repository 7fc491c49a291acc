"""A library factory that communicates over the group it is handed (issue 14).

FlashInfer's ``create_allreduce_fusion_workspace(..., group=g)`` allocates
each member's buffers and exchanges their IPC handles over ``g`` (the vllm
pack declares it a collective over that group): every member enters it, and
what it hands back -- a workspace, or None where the topology cannot give
one -- is the same on every member, whatever ``rank`` each passed.  A member
failing alone inside it would hang its peers in the exchange itself, so the
fused path chosen from it later is no rank-local choice.  Around it: vLLM's
logger's once-per-process methods (``logger.warning_once``) raise nothing,
like the standard ones they log through; seeding the generator from the
platform's entropy fails on no rank alone; and tearing a workspace down
right before ``return None``, in a ``try`` whose handlers log and return
None, ends the function alike whether it fails or not.

Each VALID shape sits beside the INVALID one that must still be reported: a
workspace made by a call that is no collective carries the rank it was
given, a read of this rank's files in the ``try`` may fail on one rank, and
a handler returning another value than the teardown's path parts the ranks.
"""

import textwrap

from cslint.api import check_paths

WORKSPACE = """
    import logging
    import os
    import random

    import torch.distributed as dist

    try:
        import flashinfer.comm as fi_comm
    except ImportError:
        fi_comm = None


    def init_logger(name):
        return logging.getLogger(name)


    logger = init_logger(__name__)

    _workspace = None
    _failed = False


    class Coordinator:
        def __init__(self, ranks, rank, backend):
            self.rank = rank
            self.cpu_group = dist.new_group(ranks, backend=backend)


    _TP = None


    def get_tp():
        return _TP


    def _create(backend, world_size, rank, tokens, hidden, group):
        state = random.getstate()
        try:
            random.seed(int.from_bytes(os.urandom(16), byteorder="big"))
            workspace = fi_comm.create_allreduce_fusion_workspace(
                backend=backend, world_size=world_size, rank=rank,
                max_token_num=tokens, hidden_dim=hidden, group=group,
            )
            if backend == "mnnvl" and not getattr(workspace, "mc_ptr", 0):
                workspace.destroy()
                logger.warning_once("no multicast on this topology")
                return None
        except Exception as e:
            if "multicast" in str(e).lower():
                logger.warning_once(f"no workspace: {e}")
            else:
                logger.warning_once("no workspace")
            return None
        finally:
            random.setstate(state)
        return workspace


    def _create_or_false(tokens, group):
        try:
            workspace = fi_comm.create_allreduce_fusion_workspace(max_token_num=tokens, group=group)
            if not getattr(workspace, "mc_ptr", 0):
                workspace.destroy()
                return None
        except Exception:
            return False
        return workspace


    def _create_local(world_size, rank, tokens, hidden, group):
        try:
            return fi_comm.make_buffer(world_size=world_size, rank=rank, max_token_num=tokens, group=group)
        except Exception:
            return None


    def _create_after_read(path, group):
        try:
            with open(path) as handle:
                tuned = int(handle.read())
            return fi_comm.create_allreduce_fusion_workspace(max_token_num=tuned, group=group)          # INVALID: read

        except Exception:
            return None


    def get_workspace(world_size, rank, tokens, hidden, group):
        global _workspace, _failed
        if _workspace is not None or _failed:
            return _workspace
        _workspace = _create("mnnvl", world_size, rank, tokens, hidden, group)
        if _workspace is None:
            _workspace = _create("trtllm", world_size, rank, tokens, hidden, group)          # VALID: failed on every member
        if _workspace is None:
            _failed = True
        return _workspace


    def fused_norm(x, tp_size):
        tp = get_tp()
        if get_workspace(tp_size, tp.rank, 1024, x.shape[1], tp.cpu_group) is not None:
            return x
        dist.all_reduce(x, group=tp.cpu_group)          # VALID: the workspace is made by the whole group
        return x


    def teardown_norm(x):
        tp = get_tp()
        if _create_or_false(1024, tp.cpu_group) is None:
            return x
        dist.all_reduce(x, group=tp.cpu_group)          # INVALID: a failed teardown returns False, not None
        return x


    def local_norm(x, tp_size):
        tp = get_tp()
        if _create_local(tp_size, tp.rank, 1024, x.shape[1], tp.cpu_group) is not None:
            return x
        dist.all_reduce(x, group=tp.cpu_group)          # INVALID: a buffer made from this rank's rank alone
        return x
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def _flagged(tmp_path, source):
    source = textwrap.dedent(source)
    (tmp_path / "module.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return source, sorted({f.line for f in findings if f.path.endswith("module.py")})


def test_a_workspace_the_group_makes_together_is_agreed_over_it(tmp_path):
    source, flagged = _flagged(tmp_path, WORKSPACE)
    assert flagged == _marked(source, "INVALID")
    assert _marked(source, "VALID")
