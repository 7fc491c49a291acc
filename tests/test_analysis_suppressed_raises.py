"""A raise a ``with contextlib.suppress(E):`` of its own function suppresses
(issue 12).

The ``with`` amounts to ``try: ... except E: pass``: a rank whose rank-local
test raises ``E`` inside the block leaves the block and goes on after it,
while its peers, which raised nothing, go on inside it to the collective the
raising rank skipped.  That is a hang, reported as the ``return`` that leaves
early is (cfg._Builder._suppressed_at).  Kept silent: the ``with`` suppresses
another class, the ``suppress`` is not contextlib's, the collective comes
after the ``with`` (every rank meets it), ``suppress()`` of no class."""

from __future__ import annotations

import textwrap

import pytest

from cslint.api import check_source

_HEAD = """
    import contextlib
    import os
    from contextlib import suppress

    import torch.distributed as dist


    class LoadError(FileNotFoundError):
        pass


"""


def _lines(body: str) -> list:
    source = textwrap.dedent(_HEAD) + textwrap.dedent(body)
    return sorted((f.code, f.line) for f in check_source(source, report="per-site").findings)


REPORTED = {
    "an_arm_that_raises": """
        def step(path, group):
            with contextlib.suppress(FileNotFoundError):
                if dist.get_rank(group) == 0 and not os.path.exists(path):
                    raise FileNotFoundError(path)
                dist.barrier(group=group)
            return path
    """,
    # the name imported from contextlib, a tuple of classes, a subclass the module derives
    "imported_by_name_a_subclass": """
        def step(path, group):
            with open(path), suppress(KeyError, FileNotFoundError):
                if dist.get_rank(group) == 0 and not os.path.exists(path):
                    raise LoadError(path)
                dist.barrier(group=group)
            return path
    """,
    # a handler that only raises, inside the block
    "a_handler_that_raises": """
        def step(path, group):
            with contextlib.suppress(RuntimeError):
                if dist.get_rank(group) == 0:
                    try:
                        os.stat(path)
                    except OSError as error:
                        raise RuntimeError(str(error))
                dist.barrier(group=group)
            return path
    """,
    # the rank-local test at the outer level, the suppressing ``with`` inside a loop
    "in_a_loop": """
        def step(paths, group):
            for path in paths:
                with suppress(FileNotFoundError):
                    if not os.path.exists(path):
                        raise FileNotFoundError(path)
                    dist.barrier(group=group)
            return paths
    """,
}

#: the line of each one's barrier, and what it is reported as
_BARRIER = {"an_arm_that_raises": ("CSL102", 18), "imported_by_name_a_subclass": ("CSL102", 18),
            "a_handler_that_raises": ("CSL104", 21), "in_a_loop": ("CSL102", 19)}


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_a_raise_the_function_suppresses_is_a_rank_local_exit(name):
    assert _BARRIER[name] in _lines(REPORTED[name])


SILENT = {
    # another class is suppressed: the raise ends the process
    "another_class": """
        def step(path, group):
            with contextlib.suppress(KeyError):
                if dist.get_rank(group) == 0 and not os.path.exists(path):
                    raise FileNotFoundError(path)
                dist.barrier(group=group)
            return path
    """,
    # ``suppress()`` of no class suppresses nothing
    "no_class": """
        def step(path, group):
            with contextlib.suppress():
                if dist.get_rank(group) == 0 and not os.path.exists(path):
                    raise FileNotFoundError(path)
                dist.barrier(group=group)
            return path
    """,
    # a ``suppress`` of the module's own
    "not_contextlib": """
        def quiet(*kinds):
            return open("log.txt")


        def step(path, group):
            with quiet(FileNotFoundError):
                if dist.get_rank(group) == 0 and not os.path.exists(path):
                    raise FileNotFoundError(path)
                dist.barrier(group=group)
            return path
    """,
    # every rank meets the barrier after the block
    "the_collective_after_the_block": """
        def step(path, group):
            with contextlib.suppress(FileNotFoundError):
                if dist.get_rank(group) == 0 and not os.path.exists(path):
                    raise FileNotFoundError(path)
                path = path + ".done"
            dist.barrier(group=group)
            return path
    """,
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_raise_nothing_in_the_function_suppresses_ends_the_process(name):
    assert [code for code, _line in _lines(SILENT[name]) if code in ("CSL102", "CSL104")] == []


#: a ``try`` inside the suppressing block catches the raise first: the rank goes on inside the block, to the
#: barrier every rank reaches
CAUGHT_INSIDE = {
    "the_same_class": """
        def step(path, group):
            with contextlib.suppress(FileNotFoundError):
                try:
                    if dist.get_rank(group) == 0 and not os.path.exists(path):
                        raise FileNotFoundError(path)
                except FileNotFoundError:
                    pass
                dist.barrier(group=group)
            return path
    """,
    "a_subclass_of_the_suppressed": """
        def step(path, group):
            with contextlib.suppress(OSError):
                try:
                    if dist.get_rank(group) == 0 and not os.path.exists(path):
                        raise LoadError(path)
                except LoadError:
                    pass
                dist.barrier(group=group)
            return path
    """,
}


@pytest.mark.parametrize("name", sorted(CAUGHT_INSIDE))
def test_a_raise_a_try_inside_the_block_catches_goes_on_inside_it(name):
    assert [code for code, _line in _lines(CAUGHT_INSIDE[name]) if code in ("CSL102", "CSL104")] == []


def test_a_try_inside_the_block_catching_another_class_leaves_it_suppressed():
    body = """
        def step(path, group):
            with contextlib.suppress(FileNotFoundError):
                try:
                    if dist.get_rank(group) == 0 and not os.path.exists(path):
                        raise FileNotFoundError(path)
                except KeyError:
                    pass
                dist.barrier(group=group)
            return path
    """
    assert [code for code, _line in _lines(body)] == ["CSL102"]


#: a statement of the block that may fail (not a ``raise`` of its own) with a class the ``with`` suppresses: the
#: failing rank goes on past the block, its peers inside it to the collective it skipped (issue 12)
FAILING_WORK = {
    "a_read_of_the_disk": """
        def step(path, group):
            with contextlib.suppress(OSError):
                data = open(path).read()
                dist.barrier(group=group)
            return path
    """,
    # a function of the module raising the suppressed class where its rank-local test holds
    "a_callee_that_raises_it": """
        def load(path):
            if not os.path.exists(path):
                raise LoadError(path)
            return path


        def step(path, group):
            with suppress(LoadError):
                load(path)
                dist.barrier(group=group)
            return path
    """,
    # a ``try`` inside the block catches another class: the failure still reaches the ``with``
    "a_try_of_another_class_inside": """
        def step(path, group):
            with contextlib.suppress(OSError):
                try:
                    data = open(path).read()
                except KeyError:
                    data = None
                dist.barrier(group=group)
            return path
    """,
    "in_a_loop": """
        def step(paths, group):
            for path in paths:
                with contextlib.suppress(OSError):
                    os.remove(path)
                    dist.barrier(group=group)
            return paths
    """,
    # the test of an ``if`` fails (its arms meet again before the barrier)
    "a_test_that_fails": """
        def step(path, group):
            with contextlib.suppress(OSError):
                if os.stat(path).st_size:
                    path = path + ".full"
                dist.barrier(group=group)
            return path
    """,
    # ``os.path.exists`` answers False where the disk fails it, but raises on a path of another kind (None)
    "an_existence_test_of_a_path_some_ranks_lack": """
        def step(path, group):
            mine = path if dist.get_rank(group) == 0 else None
            with contextlib.suppress(TypeError):
                if os.path.exists(mine):
                    path = path + ".full"
                dist.barrier(group=group)
            return path
    """,
    # one class of a tuple fails on this rank alone
    "a_tuple_with_a_local_failure": """
        def step(path, group):
            with contextlib.suppress(ValueError, OSError):
                mode = os.stat(path).st_mode
                dist.barrier(group=group)
            return path
    """,
}

#: the line of each one's barrier
_FAILING_BARRIER = {"a_read_of_the_disk": 17, "a_callee_that_raises_it": 23, "a_try_of_another_class_inside": 20,
                    "in_a_loop": 18, "a_tuple_with_a_local_failure": 17, "a_test_that_fails": 18,
                    "an_existence_test_of_a_path_some_ranks_lack": 19}


@pytest.mark.parametrize("name", sorted(FAILING_WORK))
def test_work_that_fails_with_a_suppressed_class_leaves_the_block(name):
    assert ("CSL104", _FAILING_BARRIER[name]) in _lines(FAILING_WORK[name])


QUIET_WORK = {
    # a ``try`` inside the block catches everything first
    "caught_inside": """
        def step(path, group):
            with contextlib.suppress(OSError):
                try:
                    data = open(path).read()
                except Exception:
                    data = None
                dist.barrier(group=group)
            return path
    """,
    # every rank meets the barrier after the block
    "the_collective_after_the_block": """
        def step(path, group):
            with contextlib.suppress(OSError):
                data = open(path).read()
            dist.barrier(group=group)
            return path
    """,
    # only classes every rank raises alike given the same operands (a path every rank is handed)
    "uniform_classes": """
        def step(path, group):
            with contextlib.suppress(ValueError, KeyError):
                mode = os.stat(path).st_mode
                dist.barrier(group=group)
            return path
    """,
    # a class the module defines: a library call never raises it
    "a_class_of_the_module": """
        class ConfigMissing(Exception):
            pass


        def step(path, group):
            with contextlib.suppress(ConfigMissing):
                size = os.path.getsize(path)
                dist.barrier(group=group)
            return path
    """,
    # an existence test of a path every rank is handed: a failing disk answers False, it raises nothing
    "an_existence_test": """
        def step(path, group):
            with contextlib.suppress(OSError, TypeError):
                if os.path.exists(path):
                    path = path + ".full"
                dist.barrier(group=group)
            return path
    """,
    # nothing in the block can fail before the barrier
    "nothing_fails": """
        def step(path, group):
            with contextlib.suppress(OSError):
                path = path + ".done"
                dist.barrier(group=group)
            return path
    """,
    # ``suppress`` of the module's own: no exception edge
    "not_contextlib": """
        def quiet(*kinds):
            return open("log.txt")


        def step(path, group):
            with quiet(OSError):
                data = open(path).read()
                dist.barrier(group=group)
            return path
    """,
}


@pytest.mark.parametrize("name", sorted(QUIET_WORK))
def test_work_whose_failure_no_rank_meets_alone_inside_the_block_is_quiet(name):
    assert [code for code, _line in _lines(QUIET_WORK[name]) if code in ("CSL102", "CSL104")] == []


def test_a_test_that_fails_in_a_try_body_decides_by_its_failure_where_its_arms_meet_again():
    # the site comes after the ``if`` whichever way it goes: only the failure of the test sends a rank away
    failing = """
        def step(path, group):
            try:
                if os.stat(path).st_size:
                    path = path + ".full"
                dist.barrier(group=group)
            except OSError:
                pass
            return path
    """
    assert _lines(failing) == [("CSL104", 18)]
    # a rank test that cannot fail: every rank reaches the barrier
    assert _lines(failing.replace("os.stat(path).st_size", "dist.get_rank(group) == 0")) == []
