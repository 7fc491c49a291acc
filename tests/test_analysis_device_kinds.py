"""A device's kind (``cpu``, ``cuda``) follows the text it is made from:
``torch.device("cpu" if rank == 0 else "cuda")`` is a CPU device on rank 0
and a GPU elsewhere, so ``dev.type``, ``dev == torch.device("cpu")`` and
``str(dev)`` differ (evaluator._device_parts).  Its index is held: a device
made from this rank's own id as written (``torch.device("cuda", local_rank)``,
``f"cuda:{local_rank}"``, ``torch.device(torch.cuda.current_device())``) is of
one kind on every rank, and so is the kind of device a value placed on it
lives on (``x.device.type``, read as ``x.is_cuda`` is: atoms.DEVICE_KIND)."""

import textwrap

from cslint.api import check_paths


def _found(tmp_path, source: str) -> list:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    text = "import os\n\nimport torch\nimport torch.distributed as dist\n" + textwrap.dedent(source)
    (package / "mod.py").write_text(text)
    lines = text.splitlines()
    found = check_paths([str(package)], report="per-site").findings
    return sorted((f.code, lines[f.line - 1].strip()) for f in found)


# -- a kind chosen per rank: reported --------------------------------------------

_CHOSEN = """

def inline_type(x):
    dev = torch.device("cpu" if dist.get_rank() == 0 else "cuda")
    if dev.type == "cpu":
        dist.all_reduce(x)  # inline_type


def inline_eq(x):
    dev = torch.device("cpu" if dist.get_rank() == 0 else "cuda")
    if dev == torch.device("cpu"):
        dist.all_reduce(x)  # inline_eq


def declared() -> torch.device:
    if dist.get_rank() == 0:
        return torch.device("cpu")
    return torch.device("cuda")


def declared_type(x):
    if declared().type == "cpu":
        dist.all_reduce(x)  # declared_type


def local_text(x):
    kind = "cpu" if dist.get_rank() == 0 else "cuda"
    if str(torch.device(kind)) == "cpu":
        dist.all_reduce(x)  # local_text


def formatted_kind(x):
    dev = torch.device(f"{'cpu' if dist.get_rank() == 0 else 'cuda'}")
    if dev in (torch.device("cpu"),):
        dist.all_reduce(x)  # formatted_kind


def pick(rank):
    return "cpu" if rank == 0 else "cuda"


def helper_kind(x):
    if torch.device(pick(dist.get_rank())).type == "cpu":
        dist.all_reduce(x)  # helper_kind


def kind_param(x, kind):
    if torch.device(kind, 0).type == "cpu":
        dist.all_reduce(x)  # kind_param


def hands_a_flag(x):
    flag = dist.get_rank() == 0
    kind_param(x, "cpu" if flag else "cuda")


def type_keyword(x):
    dev = torch.device(type="cpu" if dist.get_rank() == 0 else "cuda", index=0)
    if dev.type == "cpu":
        dist.all_reduce(x)  # type_keyword


def formatted_kind_and_index(x):
    dev = torch.device(f"{'cpu' if dist.get_rank() == 0 else 'cuda'}:{0}")
    if dev.type == "cpu":
        dist.all_reduce(x)  # formatted_kind_and_index


def looped(x):
    kind = "cuda"
    for _ in range(dist.get_rank()):
        kind = "cpu"
    if torch.device(kind).type == "cpu":
        dist.all_reduce(x)  # looped


class Runner:
    def __init__(self):
        self.device = torch.device("cpu" if dist.get_rank() == 0 else "cuda")


class Engine:
    def __init__(self):
        self.runner = Runner()

    def step(self, x):
        if self.runner.device.type == "cpu":
            dist.all_reduce(x)  # field_of_tree_object


def chosen_tensor(a, b):
    x = a if dist.get_rank() == 0 else b
    if x.device.type == "cpu":
        dist.all_reduce(x)  # chosen_tensor
"""

_CHOSEN_SITES = ["inline_type", "inline_eq", "declared_type", "local_text", "formatted_kind", "helper_kind",
                 "kind_param", "type_keyword", "formatted_kind_and_index", "looped", "field_of_tree_object",
                 "chosen_tensor"]


def test_a_device_kind_chosen_per_rank_differs(tmp_path):
    found = _found(tmp_path, _CHOSEN)
    reported = sorted(text.rpartition("# ")[2] for code, text in found if code == "CSL101")
    assert reported == sorted(_CHOSEN_SITES)


# -- a device of this rank's own index: one kind everywhere --------------------

_OWN_INDEX = """

def index_argument(x):
    dev = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    if dev.type == "cuda":
        dist.all_reduce(x)


def formatted_index(x):
    dev = torch.device(f"cuda:{dist.get_rank()}")
    if dev.type == "cuda":
        dist.all_reduce(x)


def concatenated_index(x):
    dev = torch.device("cuda:" + str(dist.get_rank()))
    if dev.type == "cuda":
        dist.all_reduce(x)


def platform_kind(x, platform):
    # the index picked one way on some ranks and another on others: a device of the platform's kind either way
    index = int(os.environ["LOCAL_RANK"]) if dist.get_rank() % 2 else dist.get_rank()
    dev = torch.device(f"{platform.device_name}:{index}")
    if dev.type == "cuda":
        dist.all_reduce(x)
    if dev is not None:
        dist.all_reduce(x)


def keywords(x):
    dev = torch.device(type="cuda", index=dist.get_rank())
    if dev.type == "cuda":
        dist.all_reduce(x)


def current_device(x):
    dev = torch.device(torch.cuda.current_device())
    if dev.type == "cuda":
        dist.all_reduce(x)


def placed(x):
    y = x.to(torch.device(f"cuda:{dist.get_rank()}"))
    if y.device.type == "cuda":
        dist.all_reduce(y)


def made_on(x):
    y = torch.zeros(4, device=torch.device("cuda", torch.cuda.current_device()))
    if y.device.type == "cuda":
        dist.all_reduce(y)


def placed_by_param(x, device):
    y = x.to(device)
    if y.device.type == "cpu":
        dist.all_reduce(y)


def hands_own_device(x):
    placed_by_param(x, torch.device(f"cuda:{dist.get_rank()}"))
    placed_by_param(x, f"cuda:{dist.get_rank()}")
"""


def test_a_device_of_this_ranks_own_index_is_of_one_kind(tmp_path):
    assert _found(tmp_path, _OWN_INDEX) == []


def test_a_test_of_the_own_index_still_differs(tmp_path):
    # INVALID: the index, read back, is this rank's
    found = _found(tmp_path, """

def by_index(x):
    dev = torch.device("cuda", dist.get_rank())
    if dev.index == 0:
        dist.all_reduce(x)
""")
    assert [code for code, _text in found] == ["CSL101"]


# -- an element a rank picks: its device's kind differs -------------------------

_PICKED = """

def filtered(ts):
    keep = [t for t in ts if t.sum() > dist.get_rank()]
    if keep[0].device.type == "cpu":
        dist.all_reduce(ts[0])  # filtered


def strided_by_filter(ts):
    mine = [t for i, t in enumerate(ts) if i % dist.get_world_size() == dist.get_rank()]
    if mine[0].device.type == "cpu":
        dist.all_reduce(ts[0])  # strided_by_filter


def first_of_filter(ts):
    mine = next(t for i, t in enumerate(ts) if i == dist.get_rank())
    if mine.device.type == "cpu":
        dist.all_reduce(ts[0])  # first_of_filter


def sliced(ts):
    mine = ts[dist.get_rank():]
    if mine[0].device.type == "cpu":
        dist.all_reduce(ts[0])  # sliced


def stride_shard(model):
    # each rank takes its stride of the parameters; some of them may live on the CPU
    mine = list(model.parameters())[dist.get_rank()::dist.get_world_size()]
    if mine[0].device.type == "cpu":
        dist.barrier()  # stride_shard
"""

_PICKED_SITES = ["filtered", "strided_by_filter", "first_of_filter", "sliced", "stride_shard"]


def test_the_device_kind_of_an_element_a_rank_picks_differs(tmp_path):
    # INVALID: which element a rank picks decides the device it lives on, though placing one on this rank's
    # device does not (reviewA53 dk2)
    found = _found(tmp_path, _PICKED)
    reported = sorted(text.rpartition("# ")[2] for code, text in found if code == "CSL101")
    assert reported == sorted(_PICKED_SITES)


def test_the_device_kind_of_elements_placed_on_this_ranks_device_stays_alike(tmp_path):
    # VALID: every element is placed on this rank's own GPU, and the first is read whatever the rank
    assert _found(tmp_path, """

def placed_each(ts):
    ys = [t.to(torch.device("cuda", int(os.environ["LOCAL_RANK"]))) for t in ts]
    if ys[0].device.type == "cuda":
        dist.all_reduce(ys[0])


def placed_then_first(ts):
    ys = [t.to(f"cuda:{dist.get_rank()}") for t in ts]
    first = next(iter(ys))
    if first.device.type == "cuda":
        dist.all_reduce(first)
""") == []
