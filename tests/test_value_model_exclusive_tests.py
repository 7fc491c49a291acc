"""A name bound in the arm of one ``if`` is not what a later ``if`` of the
same block reads where its test rules the first arm out
(``analysis/exclusive.py``): a pipeline stage rebinds its outputs to this
rank's slice only when it is not the last stage, and the last stage alone
keeps them as its loss, which therefore holds the module's output.  Both
the dataflow (a function reaching a collective) and the summary walk (one
writing a field that another reads before a collective) read it so.  The
same test on both, a call between the tests, an ``else`` on the first test,
a rebinding in between or the later test's own ``else`` still differ."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source)).findings]


_DEEP = """
    import torch.distributed as dist


    class Stage:
        def forward_step(self, batch):
            outputs = self.module(batch)
            if self.partitioned and not self.is_last_stage():
                outputs = list(range(dist.get_rank()))
            {between}
            if {second}:
                if len(outputs) > 1:
                    dist.all_reduce(self.total, group=self.dp_group)
"""


def _deep(second="self.is_last_stage()", between='self.buffers["outputs"] = outputs'):
    return _DEEP.replace("{second}", second).replace("{between}", between)


def test_the_last_stage_reads_the_module_output_alone():
    assert _codes(_deep()) == []


def test_the_same_side_still_differs():
    assert _codes(_deep(second="not self.is_last_stage()")) == [("CSL101", 13)]


def test_a_call_between_the_tests_still_differs():
    assert _codes(_deep(between='self.buffers.append(outputs)')) == [("CSL101", 13)]


def test_a_rebinding_between_the_tests_still_differs():
    assert _codes(_deep(between="outputs = self.post(outputs)")) == [("CSL101", 13)]


def test_a_test_of_another_predicate_still_differs():
    assert _codes(_deep(second="self.is_first_stage()")) == [("CSL101", 13)]


def test_local_truth_values_bound_once_rule_out_too():
    source = """
        import torch.distributed as dist


        class Stage:
            def forward_step(self, batch):
                last = self.stage_id == self.num_stages - 1
                outputs = self.module(batch)
                if self.partitioned and not last:
                    outputs = list(range(dist.get_rank()))
                if last:
                    if len(outputs) > 1:
                        dist.all_reduce(self.total, group=self.dp_group)
                else:
                    if len(outputs) > 1:
                        dist.all_reduce(self.total, group=self.dp_group)
    """
    # the ``else`` of the later test is where the earlier arm ran: it still differs
    assert _codes(source) == [("CSL101", 16)]


def test_an_else_on_the_earlier_test_still_differs():
    source = """
        import torch.distributed as dist


        class Stage:
            def forward_step(self, batch):
                outputs = self.module(batch)
                if not self.is_last_stage():
                    outputs = self.scale(outputs)
                else:
                    outputs = list(range(dist.get_rank()))
                if self.is_last_stage():
                    if len(outputs) > 1:
                        dist.all_reduce(self.total, group=self.dp_group)
    """
    assert _codes(source) == [("CSL101", 14)]


_FIELD = """
    import torch.distributed as dist


    class Stage:
        def forward_step(self, batch):
            outputs = self.module(batch)
            if self.partitioned and not self.is_last_stage():
                outputs = list(range(dist.get_rank()))
            self.buffers["outputs"] = outputs
            if {second}:
                self.loss = outputs

        def reduce_loss(self):
            if len(self.loss) > 1:
                dist.all_reduce(self.total, group=self.dp_group)
"""


def test_a_field_written_by_the_last_stage_alone_holds_the_module_output():
    assert _codes(_FIELD.replace("{second}", "self.is_last_stage()")) == []


def test_a_field_written_on_the_same_side_still_differs():
    assert _codes(_FIELD.replace("{second}", "not self.is_last_stage()")) == [("CSL101", 16)]


_RELATIVE = """
    import torch.distributed as dist
    from vllm.distributed import get_pp_group, get_tp_group


    class Runner:
        def step(self, batch):
            hidden = self.model(batch)
            if {first}:
                hidden = list(range(dist.get_rank()))
            {between}
            if {second}:
                if len(hidden) > 1:
                    get_tp_group().all_reduce(self.total)
"""


def _relative(first="not get_pp_group().is_last_rank", second="get_pp_group().is_last_rank",
              between='self.buf["h"] = hidden'):
    return _RELATIVE.replace("{first}", first).replace("{second}", second).replace("{between}", between)


def test_a_stage_attribute_rules_out_its_negation():
    assert _codes(_relative()) == []


def test_a_stage_id_compared_with_a_constant_rules_out_the_other_comparison():
    assert _codes(_relative(first="self.stage_id != 0", second="self.stage_id == 0")) == []


def test_a_store_to_the_tested_attribute_in_between_still_differs():
    assert _codes(_relative(first="self.stage_id != 0", second="self.stage_id == 0",
                            between="self.stage_id = 0")) == [("CSL101", 14)]


def test_the_same_stage_attribute_on_both_still_differs():
    assert _codes(_relative(second="not get_pp_group().is_last_rank")) == [("CSL101", 14)]


_IMPORTED = """
    import torch.distributed as dist


    class Stage:
        def forward_step(self, batch):
            outputs = list(range(dist.get_rank()))
            if self.partitioned and not self.is_last_stage():
                outputs = self.module(batch)
            {between}
            if self.is_last_stage():
                if len(outputs) > 1:
                    dist.all_reduce(self.total, group=self.dp_group)
"""


def test_an_import_between_the_tests_rebinds_as_an_assignment_does():
    # what the last stage reads is what the import binds, not what the name held before the first test
    assert _codes(_IMPORTED.replace("{between}", "from .cache import outputs")) == []
    assert _codes(_IMPORTED.replace("{between}", "import outputs")) == []
    assert _codes(_IMPORTED.replace("{between}", "outputs = self.cached")) == []
    # with nothing between, the rank's own list reaches the last stage: it still differs
    assert _codes(_IMPORTED.replace("{between}", "pass")) == [("CSL101", 13)]
