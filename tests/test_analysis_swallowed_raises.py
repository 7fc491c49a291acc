"""A ``raise`` or a failing ``assert`` that its own function's handler
catches and goes no further is no raise of the function (issue 14 §2.2).

The shape: a worker's preparation raises on one rank, or asserts on this
rank's data, inside a ``try`` whose broad handler only records the failure;
the recorded flag is then all-reduced and the helper raises on every rank
alike.  A caller that skips a collective when the helper raises stays in
step.  The failure takes the handler's path, which the analysis follows
(``raises.swallowed_here``).  Each VALID shape sits beside an INVALID one
that must still be reported: a handler that does not catch the class
raised, and one that raises again."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import torch
    import torch.distributed as dist


    def agree(failed, group):
        flag = torch.tensor([1 if failed else 0])
        dist.all_reduce(flag, group=group)
        return bool(flag.item())


    class Worker:
        def __init__(self, group):
            self.group = group

        def _prepare(self, batch):
            failed = False
            try:
                if dist.get_rank(self.group) == 0 and not batch:
                    raise ValueError("rank 0 got an empty batch")
                assert dist.get_rank(self.group) < len(batch)
            except Exception:
                failed = True
            if agree(failed, self.group):
                raise RuntimeError("a peer failed")
            return batch

        def _prepare_narrow(self, batch):
            failed = False
            try:
                if dist.get_rank(self.group) == 0 and not batch:
                    raise ValueError("rank 0 got an empty batch")
            except OSError:
                failed = True
            if agree(failed, self.group):
                raise RuntimeError("a peer failed")
            return batch

        def _prepare_again(self, batch):
            failed = False
            try:
                assert dist.get_rank(self.group) < len(batch)
            except AssertionError:
                failed = True
                raise
            if agree(failed, self.group):
                raise RuntimeError("a peer failed")
            return batch

        def run(self, batch, t):
            try:
                self._prepare(batch)
            except Exception:
                return None
            dist.all_reduce(t, group=self.group)  # VALID: each failure is caught and agreed
            return t

        def run_narrow(self, batch, t):
            try:
                self._prepare_narrow(batch)
            except Exception:
                return None
            dist.all_reduce(t, group=self.group)  # INVALID: the ValueError passes the OSError handler
            return t

        def run_again(self, batch, t):
            try:
                self._prepare_again(batch)
            except Exception:
                return None
            dist.all_reduce(t, group=self.group)  # INVALID: the handler raises the failure again
            return t
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_a_raise_its_own_handler_swallows_is_no_raise_of_the_function():
    source = textwrap.dedent(SOURCE)
    flagged = sorted({f.line for f in check_source(source, report="per-site").findings if f.code == "CSL104"})
    assert flagged == _marked(source, "INVALID")
    assert _marked(source, "VALID")


def _flagged(source):
    return sorted({f.line for f in check_source(source, report="per-site").findings if f.code == "CSL104"})


def test_a_class_named_beside_one_known_only_at_run_time_is_still_caught():
    # ``except (ValueError, errors.pick()):`` catches the ValueError whatever the other class is
    source = textwrap.dedent(SOURCE).replace("except OSError:", "except (ValueError, errors.pick()):")
    narrow = _marked(source, "INVALID")[0]  # run_narrow's all_reduce, now in step
    assert _flagged(source) == [line for line in _marked(source, "INVALID") if line != narrow]


def test_a_class_known_only_at_run_time_does_not_surely_catch_the_raise():
    # ``except (OSError, errors.pick()):``: the second class may be anything, the ValueError may pass
    source = textwrap.dedent(SOURCE).replace("except OSError:", "except (OSError, errors.pick()):")
    assert _flagged(source) == _marked(source, "INVALID")
