"""A dict display or comprehension a function binds to a local name keeps,
under each key, its value's own structure apart from what the value's
elements hold (``analysis/localdicts.py``): candidates built with this
rank's id, sorted into one list per operation by a filter that reads only
what every rank configured, are as many on every rank, so ``if gathers:``
agrees.  A filter, a key or a generator reading the rank, a value not built
by construction, a list changed in place or the dict rebound on some ranks
still differ."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source)).findings]


_TUNER = """
    import torch.distributed as dist

    import kernels


    class Tuner:
        def __init__(self, group, specs):
            self.group = group
            self.rank = dist.get_rank(group)
            self.specs = specs

        def _candidates(self):
            found = []
            for spec in self.specs:
                found.append(kernels.build(spec, self.rank))
            return found

        def setup(self, t):
            candidates = self._candidates()
            {sort}
            {read}
            if gathers:
                dist.all_reduce(t, group=self.group)
"""

_BY_COMPREHENSION = (
    'by_op = {op: [c for c in candidates if c.op == op] for op in ("reduce", "gather")}'
)
_BY_DISPLAY = (
    'by_op = {"reduce": [c for c in candidates if c.op == "reduce"], '
    '"gather": [c for c in candidates if c.op == "gather"]}'
)
_READ = 'gathers = by_op["gather"]'


def _tuner(sort=_BY_COMPREHENSION, read=_READ):
    return _TUNER.replace("{sort}", sort).replace("{read}", read)


def test_a_list_sorted_out_by_a_dict_comprehension_is_as_long_on_every_rank():
    assert _codes(_tuner()) == []


def test_a_list_under_a_constant_key_of_a_display_is_as_long_on_every_rank():
    assert _codes(_tuner(sort=_BY_DISPLAY)) == []


def test_the_same_list_without_the_dict_was_already_alike():
    assert _codes(_tuner(sort="pass", read='gathers = [c for c in candidates if c.op == "gather"]')) == []


def test_an_element_under_the_key_still_differs():
    read = 'gathers = by_op["gather"]\n            gathers = gathers[0]'
    assert _codes(_tuner(read=read)) == [("CSL101", 25)]


def test_a_filter_reading_the_rank_still_differs():
    sort = _BY_COMPREHENSION.replace("if c.op == op", "if self.rank > 0")
    assert _codes(_tuner(sort=sort)) == [("CSL101", 24)]


def test_a_key_the_rank_decides_still_differs():
    sort = _BY_COMPREHENSION.replace("{op:", '{(op if self.rank == 0 else "none"):')
    assert _codes(_tuner(sort=sort)) == [("CSL101", 24)]


def test_a_generator_filtered_by_the_rank_still_differs():
    sort = _BY_COMPREHENSION.replace('("reduce", "gather")}', '("reduce", "gather") if self.rank}')
    assert _codes(_tuner(sort=sort)) == [("CSL101", 24)]


def test_a_value_as_long_as_the_rank_still_differs():
    assert _codes(_tuner(sort='by_op = {"gather": list(range(self.rank))}')) == [("CSL101", 24)]


def test_a_value_chosen_by_the_rank_still_differs():
    assert _codes(_tuner(sort='by_op = {"gather": [1] if self.rank else []}')) == [("CSL101", 24)]


def test_a_list_appended_to_in_place_on_some_ranks_still_differs():
    read = 'if self.rank == 0:\n                by_op["gather"].append(1)\n            gathers = by_op["gather"]'
    assert _codes(_tuner(read=read)) == [("CSL101", 26)]


def test_a_list_appended_to_through_another_name_still_differs():
    read = ('alias = by_op\n            if self.rank == 0:\n                alias["gather"].append(1)\n'
            '            gathers = by_op["gather"]')
    assert _codes(_tuner(read=read)) == [("CSL101", 27)]


def test_the_dict_rebound_on_some_ranks_still_differs():
    read = 'if self.rank == 0:\n                by_op = {"gather": []}\n            gathers = by_op["gather"]'
    assert _codes(_tuner(read=read)) == [("CSL101", 26)]


def test_the_list_read_appended_to_on_some_ranks_still_differs():
    read = 'gathers = by_op["gather"]\n            if self.rank == 0:\n                gathers.append(1)'
    assert _codes(_tuner(read=read)) == [("CSL101", 26)]


# A nested definition that binds the name itself has a name of its own: its
# binding is not the outer one's, and what it does with its own dict leaves the
# outer dict plain.  One that declares the name ``nonlocal`` shares it.

def _with_nested(nested: str, read=_READ):
    body = "\n".join("            " + line for line in textwrap.dedent(nested).strip().splitlines())
    return _tuner(read=read + "\n" + body)


_OWN_DICT = """
def summary():
    by_op = {"count": 2}
    return by_op
"""


def test_a_nested_function_s_own_dict_of_the_same_name_is_not_the_outer_one():
    assert _codes(_with_nested(_OWN_DICT)) == []


def test_a_nested_function_s_parameter_of_the_same_name_is_not_the_outer_one():
    assert _codes(_with_nested("def report(by_op):\n    print(by_op)")) == []


def test_a_nested_lambda_s_parameter_of_the_same_name_is_not_the_outer_one():
    assert _codes(_with_nested("show = lambda by_op: print(by_op)")) == []


def test_a_nested_function_declaring_the_name_nonlocal_shares_it():
    nested = 'def reset():\n    nonlocal by_op\n    by_op = {"gather": list(range(self.rank))}'
    assert _codes(_with_nested(nested)) == [("CSL101", 27)]


def test_a_nested_function_handing_the_outer_dict_elsewhere_still_differs():
    assert _codes(_with_nested("def dump():\n    print(by_op)")) == [("CSL101", 26)]


def test_a_nested_function_whose_comprehension_target_shares_the_name_still_differs():
    nested = "def dump():\n    print(by_op)\n    return [by_op for by_op in range(2)]"
    assert _codes(_with_nested(nested)) == [("CSL101", 27)]
