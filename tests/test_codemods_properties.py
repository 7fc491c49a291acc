"""Generated early-exit functions: always-enter (keep-local) must keep every rank's own result.

On one rank, with a stand-in communicator that records what it is sent, the
fixed function must return exactly what the original returns for every input;
it must call the collective on every input, sending the original payload when
the original did and a value that leaves the consumer's answer unchanged when
it did not.  The output must also compile and leave the rest of the file alone.
"""

from __future__ import annotations

import os
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures", "codemods"))

from codemod_findings import make_finding

from codemods.driver import fix_source

HEADER = '''"""Generated."""


class Dist:
    def __init__(self):
        self.sent = []

    def tp_allgather(self, obj):
        self.sent.append(obj)
        return [obj]


'''
FOOTER = "\n\nAFTER = 1  # unchanged\n"

CONDITIONS = ["not self.queue", "self.flag", "len(self.queue) > 2"]
RESULTS = ["None", "False", "0", "'idle'", "self.flag"]
# (payload, consumer of `gathered`) pairs with an inferable neutral value
CONSUMERS = [
    ("bool(self.queue)", "any(gathered)"),
    ("bool(self.queue)", "all(gathered)"),
    ("len(self.queue)", "sum(gathered)"),
    ("len(self.queue)", "max(gathered)"),
    ("len(self.queue)", "min(gathered)"),
    ("len(self.queue)", "0 not in gathered"),
    ("(len(self.queue), self.flag)", "(sum(s[0] for s in gathered), any(s[1] for s in gathered))"),
]


@st.composite
def programs(draw):
    guards = draw(st.lists(st.tuples(st.sampled_from(CONDITIONS), st.sampled_from(RESULTS)),
                           min_size=1, max_size=2, unique_by=(lambda g: g[0], lambda g: g[1])))
    payload, consumer = draw(st.sampled_from(CONSUMERS))
    comment = draw(st.booleans())
    inline = draw(st.booleans())  # consume in place: `return any(self.dist.tp_allgather(...))`
    lines = ["class Worker:", "    def __init__(self, dist, queue, flag):", "        self.dist = dist",
             "        self.queue = queue", "        self.flag = flag", "", "    def step(self):"]
    for condition, result in guards:
        if comment:
            lines.append("        # the guard")
        lines += [f"        if {condition}:", f"            return {result}  # local"]
    lines.append("        payload = " + payload)
    if inline and consumer.startswith(("any(", "all(", "sum(", "max(", "min(")) and consumer.endswith("(gathered)"):
        lines.append(f"        return {consumer.split('(')[0]}(self.dist.tp_allgather(payload))")
    else:
        lines += ["        gathered = self.dist.tp_allgather(payload)", f"        return {consumer}"]
    source = HEADER + "\n".join(lines) + FOOTER
    return source, [result for _, result in guards]


def _findings(source, results):
    return [make_finding("gen.py", source, code="CSL102", function="Worker.step", callee="self.dist.tp_allgather",
                         guard=f"return {result}", guard_kind="early-exit", collective="tp_allgather", group="tp",
                         api="trtllm")
            for result in dict.fromkeys(results)]


def _run(source, queue, flag):
    namespace: dict = {}
    exec(compile(source, "gen.py", "exec"), namespace)  # noqa: S102 - the generated module, nothing else
    dist = namespace["Dist"]()
    result = namespace["Worker"](dist, list(queue), flag).step()
    return result, dist.sent


INPUTS = [(queue, flag) for queue in ([], [1], [1, 2, 3]) for flag in (False, True)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_keep_local_always_enter_keeps_every_result(program):
    source, results = program
    fix = fix_source(source, "gen.py", _findings(source, results), strategy="always-enter")
    assert fix.applied and not fix.refused, [r.reason for r in fix.refused]
    assert fix.fixed.startswith(HEADER) and fix.fixed.endswith(FOOTER)
    for queue, flag in INPUTS:
        before, sent_before = _run(source, queue, flag)
        after, sent_after = _run(fix.fixed, queue, flag)
        assert after == before
        assert len(sent_after) == 1, "every rank must enter the collective exactly once"
        if sent_before:
            assert sent_after == sent_before
        else:
            # what a skipping rank sends must not change a participating rank's answer
            neutral = sent_after[0]
            for other in ([1, 2], []):
                lone = _run(source, other, False)
                if not lone[1]:
                    continue
                payload = lone[1][0]
                consumer = source.split("return ")[-1].split("\n")[0]
                expected = _consume(consumer, [payload])
                assert _consume(consumer, [payload, neutral]) == expected


def _consume(consumer: str, gathered: list):
    if "tp_allgather(payload)" in consumer:
        consumer = consumer.replace("self.dist.tp_allgather(payload)", "gathered")
    return eval(consumer, {}, {"gathered": gathered})  # the generator's own consumer expressions


def test_fixing_again_with_the_same_findings_is_a_no_op():
    body = (
        "class Worker:\n"
        "    def step(self):\n"
        "        if not self.queue:\n"
        "            return None\n"
        "        payload = len(self.queue)\n"
        "        gathered = self.dist.tp_allgather(payload)\n"
        "        return sum(gathered)"
    )
    source = HEADER + body + FOOTER
    findings = _findings(source, ["None"])
    once = fix_source(source, "gen.py", findings).fixed
    assert fix_source(once, "gen.py", findings).fixed == once != source
