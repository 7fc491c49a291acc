"""A parameter's rank-locality belongs to the calling context (issue 14,
precision on real code).  A library function whose guard reads only its
parameters is reached by the library's own callers with values every rank
agrees on; a test (or any one caller) handing it this rank's slice of a
batch makes the guard differ on that path only.  The hazard is reported at
the call that passes the rank-local value, with the flow through the call;
the function itself stays clean.  A function every caller of which passes
a rank-local value (or that no call reaches) keeps its finding where the
guard is.  Each VALID shape sits beside an INVALID one."""

import textwrap

from cslint.api import check_paths, check_source


def _findings(source):
    return check_source(textwrap.dedent(source)).findings


def _codes(source):
    return [(f.code, f.line) for f in _findings(source)]


_LIBRARY = """
    import torch.distributed as dist


    def reduce_if_cuda(t, group):
        if t.is_cuda:
            dist.all_reduce(t, group=group)
        return t


    def step(batch, group):
        return reduce_if_cuda(batch, group)
"""


def test_valid_every_caller_passes_an_agreed_value():
    assert _codes(_LIBRARY) == []


def test_invalid_a_caller_passing_a_rank_slice_is_reported_at_its_call():
    found = _findings(_LIBRARY + """

    def check(rank, batch, group):
        return reduce_if_cuda(batch[rank], group)
    """)
    assert [(f.code, f.line, f.function) for f in found] == [("CSL101", 16, "check")]
    finding = found[0]
    notes = [(link.line, link.note) for link in finding.chain]
    assert (6, "the call runs only when `t.is_cuda` holds") in notes  # the callee's own condition
    assert (16, "passed as `t` to `reduce_if_cuda` in `check`") in notes
    assert "the condition is in `reduce_if_cuda`" in finding.message
    assert finding.fix_facts is None  # no rewrite of the call agrees a condition in another function
    assert finding.condition_function == "reduce_if_cuda"


def test_a_finding_at_the_calling_site_is_refused_with_the_function_that_decides():
    """`cslint fix` says why it leaves the call alone (the condition is in
    the callee), also for a finding read back from JSON (`fix --from-json`)."""
    from cslint.model import Finding
    from cslint.rules import get_rule

    finding = _findings(_LIBRARY + """

    def check(rank, batch, group):
        return reduce_if_cuda(batch[rank], group)
    """)[0]
    for seen in (finding, Finding.from_json(finding.to_json())):
        assert seen.condition_function == "reduce_if_cuda"
        reason = get_rule(seen.code).no_fix_reason(seen)
        assert reason.startswith("the condition is in `reduce_if_cuda`"), reason
        assert "re-run" not in reason
    # a finding at its own guard names no other function, and its JSON has no such key
    own = _findings(_LIBRARY.replace("if t.is_cuda:", "if dist.get_rank() == 0:"))
    assert own and all(not f.condition_function and "condition_function" not in f.to_json() for f in own)


def test_invalid_a_function_every_caller_hands_a_rank_local_value_keeps_its_finding():
    assert _codes("""
        import torch.distributed as dist


        def reduce_if_cuda(t, group):
            if t.is_cuda:
                dist.all_reduce(t, group=group)
            return t


        def check(rank, batch, group):
            return reduce_if_cuda(batch[rank], group)
    """) == [("CSL101", 7)]


def test_invalid_a_guard_rank_local_by_itself_stays_in_the_function():
    # the guard reads this rank's id besides the parameter: it differs on every path
    assert _codes("""
        import torch.distributed as dist


        def reduce_if_cuda(t, group):
            if t.is_cuda and dist.get_rank() == 0:
                dist.all_reduce(t, group=group)
            return t


        def step(batch, group):
            return reduce_if_cuda(batch, group)


        def check(rank, batch, group):
            return reduce_if_cuda(batch[rank], group)
    """) == [("CSL101", 7)]


def test_invalid_the_rank_local_caller_in_another_module_is_reported_there(tmp_path):
    (tmp_path / "lib.py").write_text(textwrap.dedent(_LIBRARY))
    (tmp_path / "test_lib.py").write_text(textwrap.dedent("""
        import torch.distributed as dist

        from lib import reduce_if_cuda


        def run(batch, group):
            return reduce_if_cuda(batch[dist.get_rank()], group)
    """))
    found = check_paths([str(tmp_path)]).findings
    assert [(f.code, f.path.rsplit("/", 1)[-1], f.line) for f in found] == [("CSL101", "test_lib.py", 8)]


def test_invalid_several_rank_local_callers_keep_the_finding_where_their_paths_meet():
    # two calls hand the function a rank-local value: the guard is reported once, where it is
    assert _codes(_LIBRARY + """

    def check(rank, batch, group):
        return reduce_if_cuda(batch[rank], group)


    def check_again(rank, batch, group):
        return reduce_if_cuda(batch[rank + 1], group)
    """) == [("CSL101", 7)]


def test_invalid_a_value_passed_on_is_reported_at_the_call_it_comes_from():
    found = _findings(_LIBRARY + """

    def pack(t, group):
        return reduce_if_cuda(t, group)


    def serve(batch, group):
        return pack(batch, group)


    def check(rank, batch, group):
        return pack(batch[rank], group)
    """)
    assert [(f.code, f.line, f.function) for f in found] == [("CSL101", 24, "check")]
    notes = [(link.line, link.note) for link in found[0].chain]
    assert (16, "`reduce_if_cuda()` calls `reduce_if_cuda`") in notes
    assert (24, "passed as `t` to `pack` in `check`") in notes


def test_the_text_report_quotes_no_line_of_the_callers_file_as_the_condition(tmp_path):
    (tmp_path / "lib.py").write_text(textwrap.dedent(_LIBRARY))
    (tmp_path / "test_lib.py").write_text(textwrap.dedent("""
        import torch.distributed as dist

        from lib import reduce_if_cuda


        def run(batch, group):
            return reduce_if_cuda(batch[dist.get_rank()], group)
    """))
    from cslint.report import render
    text = render(check_paths([str(tmp_path)]), "text")
    assert "rank-local condition" not in text  # the condition is in lib.py, the snippet is test_lib.py's
    assert "lib.py:6: the call runs only when `t.is_cuda` holds" in text
