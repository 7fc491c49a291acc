"""Tests of one ``if`` chain that decide each other (issue 14, correlated
guards): a site in ``elif in_order:`` after ``if not in_order and
should_log():`` runs wherever ``in_order`` holds, whatever ``should_log()`` is
on each rank (cslint/analysis/correlated.py)."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


def test_an_elif_that_contradicts_a_conjunct_of_the_test_before_it_is_decided_by_itself():
    assert _lines("""
        import torch.distributed as dist


        def log(message, in_order=False, only_main=True):
            if not in_order and (not only_main or dist.get_rank() == 0):
                print(message)
            elif in_order:
                for _ in range(dist.get_world_size()):
                    print(message)
                    dist.barrier()


        def publish(t, cached=None):
            if cached is None and dist.get_rank() == 0:
                print("building")
            else:
                if cached is not None:
                    dist.all_reduce(t)


        def early_exit(t, cached=None):
            if cached is None and dist.get_rank() == 0:
                return
            if cached is not None:
                dist.all_reduce(t)
    """) == []


def test_a_test_that_does_not_exclude_the_first_or_reads_a_changed_name_still_decides():
    assert _lines("""
        import torch.distributed as dist


        def log(message, in_order=False, verbose=False):
            if not in_order and dist.get_rank() == 0:
                print(message)
            elif verbose:
                dist.barrier()


        def rebound(message, in_order=False):
            if not in_order and dist.get_rank() == 0:
                print(message)
            else:
                in_order = dist.get_rank() == 1
                if in_order:
                    dist.barrier()


        def through_a_field(self, message):
            if not self.in_order and dist.get_rank() == 0:
                print(message)
            elif self.in_order:
                dist.barrier()


        def rebound_after_exit(t, cached=None):
            if cached is None and dist.get_rank() == 0:
                return
            cached = t if dist.get_rank() == 1 else None
            if cached is not None:
                dist.all_reduce(t)


        IN_ORDER = False


        def through_a_module_name(message):
            if not IN_ORDER and dist.get_rank() == 0:
                print(message)
            elif IN_ORDER:
                dist.barrier()
    """) == [9, 18, 25, 33, 43]


MUTATED = """
    import torch.distributed as dist


    def drain(t, pending):
        if not pending and dist.get_rank() == 0:
            return
        pending.append(t)
        if pending:
            dist.all_reduce(t)  # reported: pending was empty at the first test, filled before the second


    def drain_alias(t, pending):
        if not pending and dist.get_rank() == 0:
            return
        queue = pending
        queue.append(t)
        if pending:
            dist.all_reduce(t)  # reported: filled through another name


    def drain_untouched(t, pending):
        if not pending and dist.get_rank() == 0:
            return
        if pending:
            dist.all_reduce(t)


    def drain_present(t, pending):
        if pending is None and dist.get_rank() == 0:
            return
        pending.append(t)
        if pending is not None:
            dist.all_reduce(t)
"""


def test_a_container_changed_between_the_two_tests_does_not_contradict():
    # ``not pending`` and ``pending`` read the same list, which the function
    # fills between them: rank 0 may have left at the first test while the
    # others pass the second; an identity test, or a name read only in tests,
    # still reads one value at both
    marked = [n for n, text in enumerate(textwrap.dedent(MUTATED).splitlines(), 1) if "# reported" in text]
    assert _lines(MUTATED) == marked


ELSE_ARMS = """
    import torch.distributed as dist


    def attend(t, cache, sharded_mode=False):
        sharded = cache is not None and sharded_mode and dist.get_world_size() > 1
        if not sharded and cache.fits(t.shape[dist.get_rank()]):
            return t
        if not sharded:
            out = t
        else:
            out = t.clone()
            dist.all_reduce(out)
        return out


    def attend_in_an_elif(t, cache, sharded_mode=False):
        sharded = cache is not None and sharded_mode and dist.get_world_size() > 1
        if not sharded and cache.fits(t.shape[dist.get_rank()]):
            return t
        if not sharded:
            out = t
        elif cache.mode == "ring":
            out = t.clone()
            dist.all_reduce(out)
        else:
            out = t
        return out


    def attend_present(t, cache, window=None):
        if window is None and cache.fits(t.shape[dist.get_rank()]):
            return t
        if window is None:
            out = t
        else:
            out = t.clone()
            dist.all_reduce(out)
        return out


    def exit_needs_the_else(t, cache, sharded_mode=False):
        sharded = cache is not None and sharded_mode and dist.get_world_size() > 1
        if sharded and cache.fits(t.shape[dist.get_rank()]):
            return t
        if not sharded:
            out = t
        else:
            out = t.clone()
            dist.all_reduce(out)  # reported: the ranks that left had the setting the else arm needs


    def rebound_between(t, cache, sharded_mode=False):
        sharded = cache is not None and sharded_mode and dist.get_world_size() > 1
        if not sharded and cache.fits(t.shape[dist.get_rank()]):
            return t
        sharded = cache.fits(t.shape[0])
        if not sharded:
            out = t
        else:
            out = t.clone()
            dist.all_reduce(out)  # reported: the else arm reads another value than the exit did


    def through_a_field(self, t, cache):
        if not self.sharded and cache.fits(t.shape[dist.get_rank()]):
            return t
        if not self.sharded:
            out = t
        else:
            self.refresh()
            out = t.clone()
            dist.all_reduce(out)  # reported: a field the call in between may set


    def else_of_a_rank_test(t, cache):
        is_root = dist.get_rank() == 0
        if is_root and cache.fits(t.shape[0]):
            return t
        if not is_root:
            out = t
        else:
            out = t.clone()
            dist.all_reduce(out)  # reported: the else arm itself is the root's alone
"""


def test_an_else_arm_that_contradicts_a_conjunct_of_an_early_exit_before_it():
    # the ranks that leave at the exit had ``not sharded``, a setting read
    # once; the collective lies in the ``else`` of ``if not sharded``, so no
    # rank reaching it saw the exit's test hold, and the ranks part over the
    # setting itself or not at all (the ``if not sharded`` test is kept)
    marked = [n for n, text in enumerate(textwrap.dedent(ELSE_ARMS).splitlines(), 1) if "# reported" in text]
    assert _lines(ELSE_ARMS) == marked


def test_a_test_is_dumped_once_however_often_its_key_is_asked(monkeypatch):
    """The key of a test (and of its negation) is made once and kept on the
    node: a test is asked again by every site it decides.  The keys stay
    what ast.dump makes of the test and of its negation."""
    import ast

    from cslint.analysis import correlated

    expected = {text: ast.dump(ast.parse(text, mode="eval").body, annotate_fields=False)
                for text in ("cached is None", "cached is not None", "in_order", "n < size")}
    made = []
    dump = ast.dump
    monkeypatch.setattr(ast, "dump", lambda *args, **kwargs: made.append(1) or dump(*args, **kwargs))
    tests = {text: ast.parse(text, mode="eval").body for text in ("cached is None", "not in_order", "n < size")}
    for _ in range(3):
        assert correlated._key(tests["cached is None"]) == expected["cached is None"]
        assert correlated._negation(tests["cached is None"]) == expected["cached is not None"]
        assert correlated._negation(tests["not in_order"]) == expected["in_order"]
        assert correlated._key(tests["n < size"]) == expected["n < size"]
        assert correlated._negation(tests["n < size"]) is None  # no negation written the other way
    assert len(made) == 4  # each test's key, and the negations of the two that have one
