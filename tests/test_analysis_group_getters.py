"""A group word as the analysed tree's own getter defines it (issue 14
§2.3/§2.5): a ``get_dp_tp_group()`` that returns a TP subgroup either way
(the attention-TP group with attention DP, the TP group without) spans the
TP ranks of one DP rank there, so a test agreed over TP decides a
collective over it alike.  A getter taking a parameter, or returning
something whose group is unknown, leaves the name's reading (DP x TP)."""

import textwrap

from cslint.api import check_paths
from cslint.analysis.groupgetters import learned_spans

_SUBGROUP_GETTER = """
    class _Parallel:
        attn_dp_enabled = False
        attn_tp_group = None
        tp_group = None


    _STATE = _Parallel()


    def get_parallel():
        return _STATE


    def get_tp_group():
        return get_parallel().tp_group


    def get_dp_group():
        return get_parallel().dp_group


    def get_dp_tp_group():
        \"\"\"The TP ranks that run one DP rank's batch.\"\"\"
        parallel = get_parallel()
        return parallel.attn_tp_group if parallel.attn_dp_enabled else parallel.tp_group
"""

_WORKER = """
    import torch
    import torch.distributed as dist

    from .parallel import get_dp_group, get_dp_tp_group, get_tp_group


    def reserve(t):
        short = torch.cuda.mem_get_info()[0] < t.numel()
        flags = get_tp_group().all_gather_object(short)
        if any(flags):
            dist.barrier(group=get_dp_tp_group().cpu_group)
        if any(flags):
            dist.barrier(group=get_dp_group().cpu_group)        # reported: the flags differ between DP ranks
"""


def _lines(tmp_path, getters: str) -> list:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "parallel.py").write_text(textwrap.dedent(getters))
    (package / "worker.py").write_text(textwrap.dedent(_WORKER))
    return sorted(f.line for f in check_paths([str(package)], report="per-site").findings
                  if f.path.endswith("worker.py"))


def test_a_getter_returning_a_tp_subgroup_either_way_makes_its_word_a_tp_group(tmp_path):
    assert _lines(tmp_path, _SUBGROUP_GETTER) == [14]


def test_a_getter_with_a_parameter_leaves_the_words_reading(tmp_path):
    getters = _SUBGROUP_GETTER.replace("def get_dp_tp_group():", "def get_dp_tp_group(attention=True):")
    assert _lines(tmp_path, getters) == [12, 14]


def test_a_getter_returning_an_unknown_group_leaves_the_words_reading(tmp_path):
    getters = _SUBGROUP_GETTER.replace("else parallel.tp_group", "else parallel.replica_group")
    assert _lines(tmp_path, getters) == [12, 14]


def test_the_spans_a_tree_learns_are_those_its_getters_all_agree_on():
    subgroup = textwrap.dedent(_SUBGROUP_GETTER).encode()
    assert learned_spans([subgroup]) == (("dp_tp", frozenset({"tp"})),)
    # a second getter of the same word that is not understood keeps the preset's reading
    other = b"def get_dp_tp_group(mesh):\n    return mesh\n"
    assert learned_spans([subgroup, other]) == ()
    # a word that is no group the presets name, or one defined as they read it, says nothing
    assert learned_spans([b"def get_indexer_cp_group():\n    return get_tp_group()\n"]) == ()
    assert learned_spans([b"def get_tp_group():\n    return _TP\n"]) == ()


# SGLang's layout: attention TP and attention CP are orthogonal factors of one
# DP shard, and with attention DP the dp_tp getter returns the attention-TP
# group, which holds none of the CP peers.  Each CP peer's first attention-TP
# rank then builds a request's inputs on its own, so a failure agreed over
# dp_tp can still differ between CP peers; agreeing it over CP too settles it.
_CP_GETTERS = _SUBGROUP_GETTER + """

    def get_attn_cp_group():
        return get_parallel().attn_cp_group
"""

_CP_WORKER = """
    import torch.distributed as dist

    from .parallel import get_attn_cp_group, get_dp_tp_group


    def build(inputs):
        failed = False
        if get_dp_tp_group().rank_in_group == 0:
            try:
                inputs.reconstruct()
            except Exception:
                failed = True
        flags = [failed]
        dist.broadcast_object_list(flags, src=0, group=get_dp_tp_group().cpu_group)
        if flags[0]:
            dist.barrier(group=get_attn_cp_group().cpu_group)   # reported: the CP peers built it apart
        both = [flags[0]]
        dist.broadcast_object_list(both, src=0, group=get_attn_cp_group().cpu_group)
        if both[0]:
            dist.barrier(group=get_attn_cp_group().cpu_group)
"""


def test_a_value_agreed_over_the_attention_tp_getter_still_differs_between_cp_peers(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "parallel.py").write_text(textwrap.dedent(_CP_GETTERS))
    (package / "worker.py").write_text(textwrap.dedent(_CP_WORKER))
    assert learned_spans([textwrap.dedent(_CP_GETTERS).encode()]) == (("dp_tp", frozenset({"tp"})),)
    found = sorted(f.line for f in check_paths([str(package)], report="per-site").findings
                   if f.path.endswith("worker.py"))
    assert found == [17]
