"""A local bound to a parameter's process group (``cpu_group =
group.cpu_group``, then ``dist.all_gather_object(..., group=cpu_group)``;
SGLang's expert-weight transport exchanging its peers' handle counts; issue
14) runs its collective over what each call passes for that parameter, as a
collective over ``group.cpu_group`` written out does
(``localgroups._bound_group``, ``program.bound_group``), and so does a
helper it hands the local to (``swap_handles(names, cpu_group)``:
``localgroups._handed_group``).  A caller handing the
TP coordinator makes it a TP collective, harmless under a stage predicate;
one handing the pipeline group, or a function that rebinds the parameter
before reading it, still endangers the call.
"""

import textwrap

from cslint.api import check_paths

SHAPES = """
    import torch.distributed as dist
    from sglang.srt.distributed import get_pp_group, get_tp_group


    def swap_handles(handles, group):
        gathered = [None] * 8
        dist.all_gather_object(gathered, handles, group=group)
        return gathered


    class WeightLink:
        def _exchange_counts(self, names, group):
            cpu_group = group.cpu_group
            counts = [None] * 8
            dist.all_gather_object(counts, len(names), group=cpu_group)
            return swap_handles(names, cpu_group)

        def _exchange_sizes(self, names, group):
            if group is None:
                group = get_pp_group()
            sizes_group = group.cpu_group
            sizes = [None] * 8
            dist.all_gather_object(sizes, len(names), group=sizes_group)
            return sizes

        @classmethod
        def open(cls, names, group):
            link = cls()
            link._exchange_counts(names, group)
            return link

        @classmethod
        def open_sized(cls, names, group):
            link = cls()
            link._exchange_sizes(names, group)
            return link


    class LinkSetup:
        def over_tp(self, names):
            group = get_tp_group()
            return WeightLink.open(names, group=group)

        def over_pp(self, names):
            return WeightLink.open(names, group=get_pp_group())

        def sized_over_tp(self, names):
            return WeightLink.open_sized(names, group=get_tp_group())


    class DraftHost:
        def __init__(self, names):
            self.last_stage = get_pp_group().is_last_rank
            self.setup = LinkSetup()

        def start(self, names):
            if self.last_stage:
                self.setup.over_tp(names)          # VALID: the link's collective runs over the TP group of one stage
            if self.last_stage:
                self.setup.over_pp(names)          # INVALID: handed the pipeline group
            if self.last_stage:
                self.setup.sized_over_tp(names)          # INVALID: the helper may replace the group it was handed
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def test_a_local_bound_to_a_parameters_group_runs_over_what_the_caller_passes(tmp_path):
    source = textwrap.dedent(SHAPES)
    (tmp_path / "module.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.path.endswith("module.py")})
    assert flagged == _marked(source, "INVALID")
    assert _marked(source, "VALID")


DEFAULTS = """
    import torch.distributed as dist
    from sglang.srt.distributed import get_pp_group, get_tp_group


    def gather_reasons(reasons, group=None):
        group = get_tp_group() if group is None else group
        out = [None] * group.world_size
        dist.all_gather_object(out, reasons, group=group.cpu_group)
        return out


    def gather_counts(counts, group=None):
        if group is None:
            group = get_tp_group()
        out = [None] * group.world_size
        dist.all_gather_object(out, counts, group=group.cpu_group)
        return out


    def gather_sizes(sizes, group=None):
        if group is None:
            group = get_tp_group()
        group = group.cpu_group
        out = [None] * 8
        dist.all_gather_object(out, sizes, group=group)
        return out


    def agree(value, what, group=None):
        values = gather_reasons(value, group=group)
        return [v for v in values if v != value]


    def agree_with_barrier(value, group=None):
        dist.barrier(group=group)
        return gather_reasons(value, group=group)


    class KernelInstall:
        def __init__(self):
            self.first_stage = get_pp_group().is_first_rank

        def install(self, reasons):
            if self.first_stage:
                gather_reasons(reasons)          # VALID: the helper falls back on the TP group
            if self.first_stage:
                gather_counts(reasons, None)          # VALID: None passed, the same fallback
            if self.first_stage:
                gather_reasons(reasons, get_pp_group())          # INVALID: handed the pipeline group
            if self.first_stage:
                gather_sizes(reasons)          # INVALID: the helper binds the parameter again
            if self.first_stage:
                agree(reasons, "widths")          # VALID: handed on unbound to the helper's TP fallback
            if self.first_stage:
                agree_with_barrier(reasons)          # INVALID: its own barrier over None is the world's
"""


def test_a_call_passing_nothing_runs_over_the_group_the_helper_falls_back_on(tmp_path):
    """``group = get_tp_group() if group is None else group`` (and the ``if``
    form): a call passing nothing or None runs the helper's collectives over
    TP (``fallbacks.default_groups``); so does a call of a function that hands
    its own None-default parameter on unbound to such a helper
    (``program.handed_default``), but not one that also uses it itself."""
    source = textwrap.dedent(DEFAULTS)
    (tmp_path / "module.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.path.endswith("module.py")})
    assert flagged == _marked(source, "INVALID")
    assert _marked(source, "VALID")
