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
