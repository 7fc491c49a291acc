"""Role arms whose paths issue nothing (issue 14, complementary-role-arms).

The arms of a role decision (``if rank == src: send else: receive``) keep the
ranks in step only when every rank, whichever arm it takes, issues the same
collectives.  A path of one arm that issues nothing (the sender returns early
under a test of its own, a guard that skips its broadcast) meets no path of an
arm that always issues: the other role waits in a collective the first never
enters.  Which path the sender takes is not a question its own test answers
for the others: ``ok`` may be the same on every rank, and the receivers, who
never test it, still wait.  Such an arm is compared with its empty path kept,
so it matches only an arm that may issue nothing too.
"""

import textwrap

import pytest

from cslint.api import check_source
from cslint.config import Settings


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


def _marked(source):
    return [n for n, text in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported" in text]


# -- valid: the roles issue the same collectives on every path --------------------------------------
VALID = """
    import torch
    import torch.distributed as dist


    def receive_into(buf, group):
        dist.broadcast(buf, src=0, group=group)
        return buf


    def share_state(x, group):
        # the root broadcasts its own tensor, the others a buffer of theirs
        if dist.get_rank(group) == 0:
            dist.broadcast(x, src=0, group=group)
            out = x
        else:
            out = torch.empty_like(x)
            dist.broadcast(out, src=0, group=group)
        return out


    def share_through_a_helper(x, group):
        # the receivers' broadcast is a call away
        if dist.get_rank(group) == 0:
            dist.broadcast(x, src=0, group=group)
            out = x
        else:
            out = receive_into(torch.empty_like(x), group)
        return out


    def share_both_or_none(x, group, n):
        # both roles skip on the same agreed count, each by a test of its own arm
        if dist.get_rank(group) == 0:
            out = x
            if n > 0:
                dist.broadcast(out, src=0, group=group)
        else:
            out = torch.empty_like(x)
            if n > 0:
                dist.broadcast(out, src=0, group=group)
        return out
"""


def test_roles_that_issue_the_same_collectives_stay_clean():
    assert _lines(VALID) == []


# -- invalid: one role may issue nothing where the other always issues ------------------------------
INVALID = """
    import torch
    import torch.distributed as dist


    def describe(x, group):
        return x.shape


    def sender_returns_first(x, group, ok):
        if dist.get_rank(group) == 0:
            if not ok:
                return None
            dist.broadcast(x, src=0, group=group)  # reported: the receivers wait where ok is false
        else:
            dist.broadcast(x, src=0, group=group)  # reported
        return x


    def sender_sends_if_any(x, group, n):
        if dist.get_rank(group) == 0:
            out = x
            if n > 0:
                dist.broadcast(out, src=0, group=group)  # reported: the receivers always wait
        else:
            out = torch.empty_like(x)
            dist.broadcast(out, src=0, group=group)  # reported
        return out


    def receiver_returns_first(x, group, ready):
        if dist.get_rank(group) == 0:
            dist.broadcast(x, src=0, group=group)  # reported: the root waits where ready is false
        else:
            if not ready:
                return None
            out = torch.empty_like(x)
            dist.broadcast(out, src=0, group=group)  # reported
        return x


    def receiver_calls_a_helper_that_issues_nothing(x, group):
        if dist.get_rank(group) == 0:
            out = x
            dist.broadcast(out, src=0, group=group)  # reported
        else:
            out = torch.empty(describe(x, group))
        return out


    def three_roles_one_may_skip(x, group, flag):
        rank = dist.get_rank(group)
        if rank == 0:
            out = x
            if flag:
                dist.broadcast(out, src=0, group=group)  # reported
        elif rank == 1:
            out = torch.empty_like(x)
            dist.broadcast(out, src=0, group=group)  # reported
        else:
            out = torch.zeros_like(x)
            dist.broadcast(out, src=0, group=group)  # reported
        return out
"""


def test_a_role_that_may_issue_nothing_is_reported():
    assert _lines(INVALID) == _marked(INVALID)


# -- a role that raises first: a crash where an exception ends the job, a path where it hangs the others ---------
RAISING = """
    import torch.distributed as dist


    def sender_raises_first(x, group, ok):
        if dist.get_rank(group) == 0:
            if not ok:
                raise ValueError("not ready")
            dist.broadcast(x, src=0, group=group)  # reported
        else:
            dist.broadcast(x, src=0, group=group)  # reported
        return x


    def sender_raises_on_an_unknown_mode(x, y, group, mode):
        if dist.get_rank(group) == 0:
            if mode == "a":
                dist.broadcast(x, src=0, group=group)  # reported
            elif mode == "b":
                dist.broadcast(y, src=0, group=group)  # reported
            else:
                raise ValueError(mode)
        else:
            dist.broadcast(x, src=0, group=group)  # reported
        return x
"""


def test_a_role_that_raises_first_ends_the_job_by_default():
    # an uncaught raise ends the process, and with it the job (the launcher tears every rank down), as a plain
    # ``if rank == 0: raise`` before the collective does: the raising arm is no path the receivers wait on
    assert _lines(RAISING) == []


def test_a_role_that_raises_first_leaves_the_others_waiting_where_exceptions_hang():
    hang = Settings(unhandled_exceptions="hang")
    found = sorted(f.line for f in check_source(textwrap.dedent(RAISING), settings=hang, report="per-site").findings)
    assert found == _marked(RAISING)


def test_a_role_whose_raise_is_caught_in_the_function_may_issue_nothing():
    source = """
        import torch.distributed as dist


        def sender_gives_up_quietly(x, group, ok):
            try:
                if dist.get_rank(group) == 0:
                    if not ok:
                        raise ValueError("not ready")
                    dist.broadcast(x, src=0, group=group)  # reported
                else:
                    dist.broadcast(x, src=0, group=group)  # reported
            except ValueError:
                pass
            return x
    """
    assert _lines(source) == _marked(source)


# -- a ``match`` in a role arm: a last ``case _:`` or capture leaves no path past every case -------
MATCHED = """
    import torch.distributed as dist


    def send_by_mode_or_wildcard(x, buf, group, mode):
        if dist.get_rank(group) == 0:
            match mode:
                case "a":
                    dist.broadcast(x, src=0, group=group)
                case _:
                    dist.broadcast(x, src=0, group=group)
        else:
            dist.broadcast(buf, src=0, group=group)


    def send_by_mode_or_capture(x, buf, group, mode):
        if dist.get_rank(group) == 0:
            match mode:
                case "a":
                    dist.broadcast(x, src=0, group=group)
                case other:
                    dist.broadcast(x, src=0, group=group)
        else:
            dist.broadcast(buf, src=0, group=group)


    def send_unless_no_case_matches(x, buf, group, mode):
        if dist.get_rank(group) == 0:
            match mode:
                case "a":
                    dist.broadcast(x, src=0, group=group)  # reported
                case "b":
                    dist.broadcast(x, src=0, group=group)  # reported
        else:
            dist.broadcast(buf, src=0, group=group)  # reported


    def send_unless_the_guard_fails(x, buf, group, mode, ready):
        if dist.get_rank(group) == 0:
            match mode:
                case "a":
                    dist.broadcast(x, src=0, group=group)  # reported
                case _ if ready:
                    dist.broadcast(x, src=0, group=group)  # reported
        else:
            dist.broadcast(buf, src=0, group=group)  # reported
"""


def test_a_match_ending_in_a_case_that_takes_every_subject_issues_on_every_path():
    # a ``match`` whose last case is a wildcard or a bare capture has no path that skips every case; one whose
    # cases may all fail (literals only, a guarded wildcard) has, and the receivers wait there alone
    assert _lines(MATCHED) == _marked(MATCHED)


# -- known gaps: paths chosen apart in each arm -----------------------------------------------------
@pytest.mark.xfail(strict=True, reason="the arms are compared as sets of paths: a sender choosing by flag_a and "
                                       "receivers choosing by flag_b offer the same set, {nothing, one broadcast}, "
                                       "though nothing ties the two choices together")
def test_arms_choosing_by_different_tests_are_reported():
    source = """
        import torch
        import torch.distributed as dist


        def send_or_receive(x, group, flag_a, flag_b):
            if dist.get_rank(group) == 0:
                out = x
                if flag_a:
                    dist.broadcast(out, src=0, group=group)  # reported
            else:
                out = torch.empty_like(x)
                if flag_b:
                    dist.broadcast(out, src=0, group=group)  # reported
            return out
    """
    assert _lines(source) == _marked(source)


@pytest.mark.xfail(strict=True, reason="an arm that leaves the block matches the rest when some path of it issues "
                                       "what the rest issues (uniformity._arm_joins, the dummy step that joins the "
                                       "peers): a path of it that issues nothing is not asked")
def test_a_leaving_arm_that_may_issue_nothing_is_reported():
    source = """
        import torch.distributed as dist


        def leave_arm(x, group, flag):
            if dist.get_rank(group) != 0:
                if flag:
                    dist.broadcast(x, src=0, group=group)  # reported
                return x
            dist.broadcast(x, src=0, group=group)  # reported
            return x
    """
    assert _lines(source) == _marked(source)


@pytest.mark.xfail(strict=True, reason="a call stands for what its callee may issue (uniformity._names_reached), "
                                       "not for what it must: a helper that skips its broadcast where n is 0 reads "
                                       "as the receivers' broadcast")
def test_a_helper_that_may_issue_nothing_is_reported():
    source = """
        import torch
        import torch.distributed as dist


        def maybe_send(x, group, n):
            if n > 0:
                dist.broadcast(x, src=0, group=group)


        def sender_skips_in_a_helper(x, group, n):
            if dist.get_rank(group) == 0:
                maybe_send(x, group, n)  # reported
            else:
                dist.broadcast(torch.empty_like(x), src=0, group=group)  # reported
            return x
    """
    assert _lines(source) == _marked(source)
