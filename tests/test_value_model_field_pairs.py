"""A tuple assignment to fields from a tuple written out (``self.found,
self.pending = os.listdir(root), None``) gives each field its own element,
as it does to local names: the field set to None is not the directory
listing beside it.  A call handing back a pair gives each field its own
element where every ``return`` of the callee writes out one tuple shape
(``callrefs.element``, as for local names ``a, b = f()``); of any other call,
each field still gets the whole value."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source)).findings]


_CHECKPOINTER = '''
    import os

    import torch.distributed as dist


    def listing_and_step(root):
        return os.listdir(root), None


    class Checkpointer:
        def __init__(self, root, group):
            self.root = root
            self.group = group
            self.found = []
            self.pending = None

        def request(self, step):
            self.pending = step

        def scan(self):
            self.found, self.pending = {value}

        def flush(self):
            if self.pending is not None:
                return
            dist.barrier(group=self.group)

        def load(self):
            if not self.found:
                return
            dist.barrier(group=self.group)
'''


def test_each_field_of_a_tuple_written_out_gets_its_own_element():
    source = _CHECKPOINTER.replace("{value}", "os.listdir(self.root), None")
    assert _codes(source) == [("CSL102", 32)]


def test_a_list_written_out_pairs_too():
    source = _CHECKPOINTER.replace("self.found, self.pending = {value}",
                                   "[self.found, self.pending] = [os.listdir(self.root), None]")
    assert _codes(source) == [("CSL102", 32)]


def test_a_pair_handed_back_by_a_call_of_one_tuple_shape_reaches_each_field_by_position():
    source = _CHECKPOINTER.replace("{value}", "listing_and_step(self.root)")
    assert _codes(source) == [("CSL102", 32)]


def test_a_pair_handed_back_by_a_call_of_no_one_shape_reaches_both_fields():
    source = _CHECKPOINTER.replace("{value}", "listing_and_step(self.root)").replace(
        "        return os.listdir(root), None",
        "        if not os.path.isdir(root):\n            return None\n        return os.listdir(root), None")
    assert _codes(source) == [("CSL102", 29), ("CSL102", 34)]
