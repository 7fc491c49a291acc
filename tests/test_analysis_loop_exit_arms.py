"""A collective in the arm of a loop's only exit (issue 14).  In
``while True: ...; if done: flush(); break`` every path out of the loop
passes through the flush, so it post-dominates the test and plain control
dependence never counts the test as deciding it.  Yet where ``done`` differs
between ranks, the ranks that leave run the flush on this pass while the
others start the next pass's collectives: the test decides the flush
(``exitarms.exit_arm_deciders``).  Where the loop issues no collective outside
that arm, every rank runs the flush once, on whichever pass it leaves, and
the sequences agree: nothing to report."""

import textwrap

from cslint.analysis import cfg as cfgmod
from cslint.analysis.controldependence import postdominators
from cslint.analysis.exitarms import exit_arm_deciders
from cslint.api import check_source
from cslint.config import Settings

DRAIN = """
    import torch.distributed as dist


    def serve(out, queue):
        while True:
            batch = queue.get(dist.get_rank())
            if batch is None:
                dist.all_gather_object(out, queue.pending)
                break
            dist.all_reduce(batch)
"""
FLUSH = (9, "CSL101")


def _found(source):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), settings=Settings(),
                                                          report="per-site").findings)


def test_the_flush_in_the_only_exit_arm_is_decided_by_the_rank_local_exit_test():
    assert _found(DRAIN) == [FLUSH, (11, "CSL102")]


def test_the_flush_in_an_only_exit_that_returns_is_decided_too():
    assert FLUSH in _found(DRAIN.replace("break", "return"))


def test_a_loop_issuing_no_collective_outside_the_exit_arm_runs_the_flush_once_on_every_rank():
    assert _found(DRAIN.replace("dist.all_reduce(batch)", "queue.work(batch)")) == []


def test_a_rank_uniform_exit_test_decides_nothing():
    uniform = DRAIN.replace("queue.get(dist.get_rank())", "queue.get(0)")
    assert _found(uniform) == []


def test_an_exit_arm_that_is_not_the_only_way_out_was_already_decided():
    # a second way out (the loop's own test) keeps the flush off some paths: plain control dependence
    assert FLUSH in _found(DRAIN.replace("while True:", "while queue.open:"))
    assert FLUSH in _found(DRAIN.replace("while True:", "for _ in range(queue.limit):"))


def test_exit_arm_deciders_name_the_arm_that_post_dominates_its_test():
    func = compile(textwrap.dedent(DRAIN), "<drain>", "exec", 0x400).body[1]
    graph = cfgmod.build_cfg(func)
    found = exit_arm_deciders(graph, postdominators(graph))
    lines = sorted({(graph.nodes[n].stmt.lineno, graph.nodes[d].stmt.lineno, label)
                    for n, deciders in found.items() for d, label, _header in deciders})
    assert lines == [(9, 8, True), (10, 8, True)]


def test_the_same_collective_on_the_staying_path_does_not_pair_with_the_flush():
    # the staying ranks gather too, then come back for the next pass: the arms are no sender/receiver pair
    source = DRAIN.replace("dist.all_reduce(batch)", "dist.all_gather_object(out, batch)")
    assert FLUSH in _found(source)


def test_the_finding_says_that_the_ranks_that_stay_go_on_to_the_next_pass():
    findings = check_source(textwrap.dedent(DRAIN), settings=Settings()).findings
    flush = next(f for f in findings if (f.line, f.code) == FLUSH)
    assert flush.message.startswith("collective `dist.all_gather_object` over all ranks runs only when `batch is None`, "
                                    "which differs between ranks: the ranks that take this arm run it and leave the "
                                    "loop, while the others go on to its next pass (source: `dist.get_rank()`")
    assert "go on to its next pass" in next(link.note for link in flush.chain if link.line == 8)
    # a branch that does not leave the loop reads as before
    plain = DRAIN.replace("                break\n", "")
    assert not any("next pass" in f.message for f in check_source(textwrap.dedent(plain), settings=Settings()).findings)
