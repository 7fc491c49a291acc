"""Paths that configuration rules out (issue 14, correlated-config-guard) and
conditions read through properties, each beside the shape that must still be
reported: a collective reached only under the opposite configuration of the
caller's path is no hazard; the same call on a path that can reach it is."""

import textwrap

from cslint.api import check_paths, check_source


def _lines(source, presets=("tensorrt_llm",)):
    result = check_source(textwrap.dedent(source), report="per-site", presets=list(presets))
    return sorted(f.line for f in result.findings)


# -- an error handler that publishes at once only without multi-rank attention-DP ---------

ERROR_HANDLER = """
    class Executor:
        def __init__(self, dist, enable_attention_dp):
            self.dist = dist
            self.enable_attention_dp = enable_attention_dp
            self.active_requests = []
            self.pending = []
            self.fatal = None

        def enqueue(self, responses):
            # gathers only under multi-rank attention-DP
            if self.enable_attention_dp and self.dist.world_size != 1:
                self.dist.tp_gather(responses)

        def handle_errors(self, msg, *, aligned: bool = False):
            multi_rank = self.enable_attention_dp and self.dist.world_size != 1
            publish = False
            if self.fatal is not None:
                if multi_rank:
                    if aligned:
                        publish = True
                else:
                    publish = True
            elif multi_rank:
                self.pending.append(msg)
            else:
                publish = True
            if publish:
                self.enqueue([msg])

        def step(self):
            if self.active_requests:
                self.handle_errors("rank-local")          # line 33: buffered under ADP, no gather
            if len(self.active_requests) > 2:
                self.handle_errors("aligned", aligned=True)   # line 35: publishes under ADP
            if self.active_requests:
                self.enqueue([1])                       # line 37: gathers under ADP
"""


def test_a_handler_that_gathers_only_in_the_other_mode_is_not_reported():
    assert _lines(ERROR_HANDLER) == [35, 37]


def test_without_the_configuration_fold_the_handler_is_reported():
    # the same handler, deciding on a per-call flag instead of the configuration: reachable
    source = ERROR_HANDLER.replace("multi_rank = self.enable_attention_dp and self.dist.world_size != 1",
                                   "multi_rank = self.fatal == 'x'")
    assert 33 in _lines(source)


def test_a_default_that_selects_the_collective_path_is_reported():
    source = ERROR_HANDLER.replace("aligned: bool = False", "aligned: bool = True")
    assert _lines(source) == [33, 35, 37]


def test_a_flag_set_on_every_path_before_its_test_folds():
    # `publish` is True on every path when attention-DP is off and False on every path when it is
    # on (aligned left at its default): the gather is reached in neither mode
    source = ERROR_HANDLER.replace("                    if aligned:\n                        publish = True\n", "")
    assert 33 not in _lines(source)


# -- one-rank worlds ----------------------------------------------------------------------

WORLD_SIZE = """
    import torch.distributed as dist

    def local_flag():
        return dist.get_rank() == 0

    def single_rank_only(t):
        if dist.get_world_size() == 1:
            if local_flag():
                dist.all_reduce(t)             # line 10: a one-rank world cannot hang
        if local_flag():
            dist.all_reduce(t)                 # line 12: reported
"""


def test_a_collective_only_a_one_rank_world_reaches_is_not_reported():
    assert _lines(WORLD_SIZE, presets=()) == [12]


# -- conditions read through a property -----------------------------------------------------

PROPERTY = """
    class Loop:
        def __init__(self, dist, config):
            self.dist = dist
            self.active_requests = []
            self.is_shutdown = False
            self.config = config

        @property
        def drained(self):
            return self.is_shutdown and len(self.active_requests) == 0

        @property
        def disabled(self):
            return self.config.max_batch_size == 0

        def run(self):
            while True:
                self.dist.tp_allgather(1)          # line 19: skipped after a rank-local break
                if self.drained:
                    break

        def run_configured(self):
            while True:
                self.dist.tp_allgather(1)          # line 25: the property reads configuration only
                if self.disabled:
                    break
"""


def test_a_break_on_a_property_of_rank_local_state_is_reported():
    assert _lines(PROPERTY) == [19]


# -- what a call passes --------------------------------------------------------------------

KEYWORD_ONLY = """
    import torch.distributed as dist

    def local_flag():
        return dist.get_rank() == 0

    def publish(*items, collective=False):
        if collective:
            dist.barrier()

    def caller():
        if local_flag():
            publish(1, 2, True)                # line 13: True lands in *items
        if local_flag():
            publish(1, collective=True)        # line 15: reported
"""


def test_a_positional_argument_never_sets_a_keyword_only_parameter():
    assert _lines(KEYWORD_ONLY, presets=()) == [15]


# -- a case parameter handed on as it is --------------------------------------------------

HANDED_ON = """
    import torch.distributed as dist

    def local_flag():
        return dist.get_rank() == 0

    def shuffle(weights, group, dry_run=False):
        if dry_run:
            dist.barrier()                     # the world, on the dry run only
            return
        weights.mul_(group.size())

    class Balancer:
        def __init__(self, group):
            self.group = group
            self.weights = None

        def rebalance(self, dry_run: bool = False):
            if not dry_run:
                self.weights = self.weights * 2
            shuffle(self.weights, self.group, dry_run)

        def rebalance_by_name(self, dry_run: bool = False):
            if not dry_run:
                self.weights = self.weights * 2
            shuffle(self.weights, self.group, dry_run=dry_run)

        def step(self):
            if local_flag():
                self.rebalance()                       # line 30: a real step, no collective
            if local_flag():
                self.rebalance_by_name()               # line 32: the same, the flag passed by keyword
            if local_flag():
                self.rebalance(True)                   # line 34: the dry run: the world barrier
            if local_flag():
                self.rebalance_by_name(dry_run=True)   # line 36: the same by keyword
            if local_flag():
                self.tick()                            # line 38: a real step through a relay
            if local_flag():
                self.tick(dry_run=True)                # line 40: the dry run through the relay

        def tick(self, dry_run=False):
            # no test reads the flag here: it is only handed on
            self.rebalance(dry_run)
"""


def _barriers(source):
    result = check_source(textwrap.dedent(source), report="per-site", presets=[])
    return sorted(f.line for f in result.findings if f.collective == "barrier")


def test_a_default_handed_on_keeps_the_callee_off_its_other_case():
    # `rebalance()` hands its own `dry_run` (False by default) on to `shuffle`, whose world
    # barrier runs only when it is True: the real step reaches no collective
    assert _barriers(HANDED_ON) == [34, 36, 40]


def test_a_parameter_handed_on_inverted_is_not_read_as_the_case():
    # `not dry_run` is not the caller's case value as it is: the real step barriers (line 30)
    source = HANDED_ON.replace("shuffle(self.weights, self.group, dry_run)\n",
                               "shuffle(self.weights, self.group, not dry_run)\n")
    barriers = _barriers(source)
    assert 30 in barriers and 34 in barriers and 38 in barriers


# -- the same flag handed on by a relay in another module (a summarised function) ----------

RELAY_STATE = """
import torch.distributed as dist


def shuffle(weights, dry_run=False):
    if dry_run:
        dist.barrier()                     # the world, on the dry run only
        return
    weights.mul_(2)


class State:
    def __init__(self):
        self.weights = None

    def step(self, is_dummy: bool = False, dry_run: bool = False):
        if is_dummy:
            self.weights = None
        shuffle(self.weights, dry_run)
"""

RELAY_RUNNER = """
import torch.distributed as dist

from pkg.state import State


class Runner:
    def __init__(self):
        self.state: State = State()
        self.enabled = True

    def tick(self, is_dummy: bool = False, dry_run: bool = False):
        if not self.enabled:
            return
        self.state.step(is_dummy, dry_run)

    def run(self, x):
        if dist.get_rank() == 0:
            self.tick()                        # line 19: a real step
        if dist.get_rank() == 0:
            self.tick(dry_run=True)            # line 21: the dry run: the world barrier
        dist.all_reduce(x)
"""


def _relay_barriers(tmp_path, runner):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "state.py").write_text(RELAY_STATE)
    (package / "runner.py").write_text(runner)
    result = check_paths([str(tmp_path)], report="per-site")
    return sorted(f.line for f in result.findings if f.path.endswith("runner.py") and f.collective == "barrier")


def test_a_relay_in_another_module_hands_its_default_on(tmp_path):
    # `tick` is summarised (what it calls reaches a collective only through a field typed by a class
    # of another module): its own `dry_run`, handed on as it is, still says which calls reach the barrier
    assert _relay_barriers(tmp_path, RELAY_RUNNER) == [21]


def test_a_relay_that_rebinds_its_flag_hands_on_no_case(tmp_path):
    runner = RELAY_RUNNER.replace("        self.state.step(is_dummy, dry_run)\n",
                                  "        dry_run = dry_run or not self.enabled\n        self.state.step(is_dummy, dry_run)\n")
    assert _relay_barriers(tmp_path, runner) == [20, 22]  # (one line more above them)


# -- a flag handed on where no call can say which parameter takes it ------------------------

def _case_params(source, qualname):
    from cslint.analysis.facts import extract_file_facts
    from cslint.config import Settings
    from cslint.presets import load_presets
    facts = extract_file_facts("pkg/work.py", textwrap.dedent(source).encode(), Settings(),
                               load_presets(["torch_distributed"]), module="pkg.work")
    return [param.name for fn in facts.functions if fn.qualname == qualname for param in fn.case_params]


def test_a_flag_handed_past_a_spread_is_no_case_parameter():
    # past `*self.extra` no call knows the flag's position: nothing selects the callee's case by it
    source = HANDED_ON.replace("            self.rebalance(dry_run)\n", "            self.rebalance(*self.extra, dry_run)\n")
    assert _case_params(source, "Balancer.tick") == []


def test_a_flag_handed_before_a_spread_is_still_a_case_parameter():
    source = HANDED_ON.replace("            self.rebalance(dry_run)\n", "            self.rebalance(dry_run, *self.extra)\n")
    assert _case_params(source, "Balancer.tick") == ["dry_run"]
