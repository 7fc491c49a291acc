"""A broadcast's root holds what it sends (issue 14): on the rank tested equal
to the broadcast's root, the payload it passed is what every rank of the group
gets back (cslint/analysis/roots.py), and a function each of whose returns hands
on a result of collectives over one group returns the same value whichever
return a rank takes (resulttransfer.agreed_group)."""

import textwrap

from cslint.api import check_source

AGREED_TOKEN = """
import uuid
from typing import cast


class Exchanger:
    def __init__(self, dist):
        self.dist = dist
        self.token = self._agree_token()
        self.pending = {}
        if self.token:
            self.pending[self.token] = 1

    def _agree_token(self):
        if self.dist.rank == 0:
            token = str(uuid.uuid4())
            self.dist.broadcast(token, 0)
            return token
        return cast(str, self.dist.broadcast(None, 0))

    def step(self):
        if not self.pending:
            return
        self.dist.tp_allgather(len(self.pending))
"""


def _findings(source):
    result = check_source(textwrap.dedent(source), presets=["tensorrt_llm"], report="per-site")
    return sorted((f.line, f.code) for f in result.findings)


def test_root_returning_the_payload_it_broadcast_agrees_with_the_receivers():
    # VALID: rank 0 returns the token it broadcast, the others what they got
    assert _findings(AGREED_TOKEN) == []


def test_root_keyword_and_inequality_test_count_too():
    source = AGREED_TOKEN.replace("if self.dist.rank == 0:", "if self.dist.rank != 0:\n"
                                  "            return cast(str, self.dist.broadcast(None, root=0))\n"
                                  "        else:") \
        .replace("self.dist.broadcast(token, 0)", "self.dist.broadcast(token, root=0)") \
        .replace("        return cast(str, self.dist.broadcast(None, 0))\n", "")
    assert "rank != 0" in source and "root=0)" in source
    assert _findings(source) == []


def test_payload_of_a_broadcast_rooted_elsewhere_stays_this_ranks_own():
    # INVALID: rank 0 passes its token to a broadcast rooted at rank 1, so it
    # keeps its own random token while the others get rank 1's
    source = AGREED_TOKEN.replace("self.dist.broadcast(token, 0)", "self.dist.broadcast(token, 1)")
    assert (24, "CSL102") in _findings(source)


def test_root_that_never_broadcasts_keeps_its_own_value():
    # INVALID: rank 0 returns a fresh token the others never see
    source = AGREED_TOKEN.replace("            self.dist.broadcast(token, 0)\n", "")
    assert (23, "CSL102") in _findings(source)


def test_payload_outside_a_root_test_stays_local():
    # INVALID: no test says this rank is the root; a non-root rank passing its
    # own token keeps it
    source = AGREED_TOKEN.replace("if self.dist.rank == 0:", "if self.dist.rank >= 0:")
    assert (24, "CSL102") in _findings(source)


def test_a_return_of_something_else_keeps_the_choice():
    # INVALID: the other ranks return nothing, so whether the result is None
    # still differs between ranks
    source = AGREED_TOKEN.replace("return cast(str, self.dist.broadcast(None, 0))", "return None")
    assert (24, "CSL102") in _findings(source)
