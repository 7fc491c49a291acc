"""Names whose meaning the analysis knows without any preset: launcher
environment variables, builtins that only raise on bad arguments, container
mutators, per-process I/O, seeded generators, communicator factories, and the
method names too generic to resolve by name alone."""

from __future__ import annotations

import ast

from ..presets import ALL_DIMS

#: every dimension in every mode: what a rank id of unknown extent differs along
ALL_MODES_ALL_DIMS = (("*", ALL_DIMS),)


# Environment variables launchers set per process.
RANK_ENV_VARS = {
    "RANK": ALL_DIMS, "LOCAL_RANK": ALL_DIMS, "GROUP_RANK": ALL_DIMS, "NODE_RANK": ALL_DIMS,
    "OMPI_COMM_WORLD_RANK": ALL_DIMS, "OMPI_COMM_WORLD_LOCAL_RANK": ALL_DIMS, "PMI_RANK": ALL_DIMS,
    "PMIX_RANK": ALL_DIMS, "SLURM_PROCID": ALL_DIMS, "SLURM_LOCALID": ALL_DIMS, "SLURM_NODEID": ALL_DIMS,
    "MV2_COMM_WORLD_RANK": ALL_DIMS, "LOCAL_PROCESS_RANK": ALL_DIMS, "CUDA_VISIBLE_DEVICES": ALL_DIMS,
}

SEEDED_GENERATORS = {"Random", "default_rng", "RandomState", "Generator", "SeedSequence", "manual_seed"}

# Builtins whose exceptions depend only on their arguments (another set than
# presets.PURE_BUILTINS: the builtins that neither communicate nor change
# anything a rank can see, which the fix facts read).
BUILTINS_FAILING_BY_ARGUMENTS = {
    "int", "float", "str", "bool", "bytes", "len", "list", "dict", "tuple", "set", "frozenset", "sorted",
    "min", "max", "sum", "abs", "round", "divmod", "range", "enumerate", "zip", "isinstance", "issubclass",
    "getattr", "hasattr", "repr", "format", "any", "all", "map", "filter", "reversed", "iter", "hash",
    "type", "id", "print", "chr", "ord", "hex", "oct", "bin", "pow", "callable", "vars", "dir",
}

# Reads of an object's structure (see cslint/analysis/atoms.py: structure and
# contents), by the transform they apply to their first argument: a number
# read from the structure (length, None-ness), a type test (``K--``: a number
# read from the kind alone, atoms.KIND), or the type itself.
STRUCTURE_BUILTINS = {"len": "C--", "isinstance": "K--", "issubclass": "K--", "hasattr": "K--",
                      "callable": "K--", "id": "C--", "type": "W--"}

# The builtin conversions to a number, by the transform they apply to what they
# convert: the result is a number whatever it was made from (or the call
# raises), so no structure of the argument -- its None-ness, its kind, a
# container's length -- is any structure of the result; it decides the
# number's value (``int(poller.poll())`` of a poll that may be None or an enum).
NUMBER_CONVERSIONS = {"int": "CCH", "float": "CCH", "complex": "CCH"}

# Builtins whose result's structure is made from their arguments' values:
# ``range(n)`` has ``n`` elements, ``set(xs)`` as many as ``xs`` has distinct ones.
SHAPING_BUILTINS = frozenset({"range", "set", "frozenset"})

# Library calls that make a tensor or array whose shape is their positional
# (or size) arguments, or cut one into pieces of those sizes: ``torch.empty(n)``
# has ``n`` elements, ``x.split(sizes)`` as many pieces as ``sizes`` says.
SHAPING_CALLS = frozenset({
    "empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm", "arange", "linspace", "logspace",
    "eye", "new_empty", "new_zeros", "new_ones", "new_full", "view", "reshape", "expand", "repeat", "tile",
    "narrow", "split", "chunk", "tensor_split", "array_split", "unflatten", "resize_", "repeat_interleave",
})
#: the positional arguments that are sizes, where not all are: ``x.narrow(dim,
#: start, length)`` starts at an offset (``torch.narrow(x, dim, start, length)``)
SHAPING_POSITIONS = {"narrow": (2,)}
#: of those, the ones that take the tensor first when called through their
#: module (``torch.narrow(x, dim, start, length)``, ``torch.split(x, sizes)``):
#: there the tensor is what is cut, and every position after it shifts by one
TENSOR_FIRST_SHAPING_CALLS = frozenset({
    "narrow", "split", "chunk", "tensor_split", "array_split", "reshape", "tile", "repeat_interleave", "unflatten",
})
#: of those, library factories whose first positional argument is a size and
#: nothing else: the object made is of one kind on every rank (its element
#: type comes from keywords such as ``dtype``), so a size that differs makes a
#: length only (``atoms.SIZED``), which a type test of the object forgives
#: (``torch.empty(n)`` after ``n`` is broadcast from a root that built it
#: otherwise); ``full`` and ``arange`` are left out: the kind of the value or
#: bounds they are given is the kind of what they make
SIZE_ONLY_FACTORIES = frozenset({"empty", "zeros", "ones", "rand", "randn", "randperm", "eye", "new_empty",
                                 "new_zeros", "new_ones"})
SHAPING_KEYWORDS = frozenset({"size", "shape", "sizes", "split_size_or_sections", "chunks", "sections", "length",
                              "end", "steps", "repeats", "num"})
#: Library calls that cut one value into pieces of its own kind (a tensor into
#: tensors, an array into arrays, a string into strings): an index picks which
#: piece and so its contents and size, never its kind
#: (``x.tensor_split(world)[rank]`` is a tensor on every rank).
PIECE_CALLS = frozenset({"split", "chunk", "tensor_split", "array_split", "unbind", "hsplit", "vsplit", "dsplit",
                         "split_with_sizes"})

# Methods of a mapping or sequence that pick an element by their first
# argument: the element a rank-local key picks is another object, with its own
# structure (``groups.get(rank)`` is None on the ranks no group was made for),
# as ``groups[rank]`` is.
LOOKUP_METHODS = frozenset({"get", "pop", "setdefault", "__getitem__"})

# torch.distributed's module: the dotted modules its functions and classes
# are found under, and every text a call names it by as a receiver (those and
# the aliases code imports it as, ``import torch.distributed as dist``,
# ``from torch.distributed import distributed_c10d as c10d``).  A call on one
# of them runs over the group it is handed (the world by default), never over
# a group its receiver names.
TORCH_DISTRIBUTED_MODULES = ("torch.distributed", "torch.distributed.distributed_c10d")
TORCH_DISTRIBUTED_RECEIVERS = frozenset({"dist", "c10d", *TORCH_DISTRIBUTED_MODULES})

# Where a library call is told to put its result: a method that moves its
# receiver (``module.to(device)``, ``t.cuda(local_rank)``) and the keywords
# that place what a call makes (``torch.empty(n, device=dev)``).  The device
# is where the value lives, not what it is: a tensor or a module on this
# rank's GPU holds the same data, with the same structure, as on any other.
PLACEMENT_METHODS = frozenset({"to", "cuda"})
PLACEMENT_KEYWORDS = frozenset({"device"})
# Library classes named in lowercase whose object is a place, built from a
# kind and an index (``torch.device(f"cuda:{local_rank}")``): a device on every
# rank, never None, of one type, whatever the index is (a number picked one
# way on some ranks and another way on others too); the index is held inside
# it, read back by ``.index`` (atoms.PLACEMENT_ATTRIBUTES), as a ``CamelCase``
# library object holds what it was built with.  The kind is what the text
# names (``torch.device("cpu" if rank == 0 else "cuda")``: evaluator._device_parts).
PLACE_CLASSES = frozenset({"torch.device"})
# torch's process-group classes, made from a store, this rank's rank in the
# group and the group's size: every member that makes one holds a group of
# that size, whichever store handle it joined through (the leader's listening
# server or a client of it) and whatever its rank in it is, so what it is
# made from is held inside it, as a place's index is: neither whether it is a
# group, nor its type, nor its size (agreed within the group, as
# ``get_world_size(group)`` is) follows a per-rank handle.
GROUP_CLASSES = frozenset(
    f"{module}.{name}" for module in (*TORCH_DISTRIBUTED_MODULES, "torch._C._distributed_c10d")
    for name in ("ProcessGroup", "ProcessGroupGloo", "ProcessGroupNCCL", "ProcessGroupMPI", "ProcessGroupUCC"))
#: library classes whose object holds all it is made from (:func:`evaluator._held`)
WHOLLY_HELD_CLASSES = PLACE_CLASSES | GROUP_CLASSES
WHOLLY_HELD_NAMES = frozenset(name.rpartition(".")[2] for name in WHOLLY_HELD_CLASSES)

# Methods and attributes of a library object (a tensor, a dict) that read its
# structure: its shape, size, rank, layout, element type or key set.  A
# tensor's layout (its strides, whether they are contiguous) follows its shape
# and how it was made, never what it holds: a rank's slice of the rows of a
# contiguous tensor, at whatever offset, is contiguous as every rank's is.
STRUCTURE_METHODS = frozenset({"size", "numel", "nelement", "dim", "ndimension", "keys", "__len__",
                               "stride", "is_contiguous"})
STRUCTURE_ATTRIBUTES = frozenset({"shape", "ndim", "dtype"})
# Methods of a tensor that read its kind (element type), never its length or
# contents (``atoms.KIND_ATTRIBUTES`` are the attributes); called through the
# library's module on a value (``torch.is_tensor(x)``), the same of that value.
KIND_METHODS = frozenset({"element_size", "is_floating_point", "is_complex", "is_signed", "is_tensor",
                          # torch's override check: whether a value of the iterable has a ``__torch_function__``
                          "has_torch_function"})

# What says a name holds a container, whose truth is its length (structure),
# not a number's value: an annotation, or a value built as one.
CONTAINER_TYPES = frozenset({
    "list", "List", "dict", "Dict", "set", "Set", "frozenset", "FrozenSet", "tuple", "Tuple", "Sequence",
    "MutableSequence", "Mapping", "MutableMapping", "Iterable", "Collection", "deque", "Deque", "OrderedDict",
    "DefaultDict", "defaultdict", "Counter",
})
#: container annotations whose ``in`` asks for a key: a mapping's key set
MAPPING_TYPES = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict", "defaultdict",
                           "Counter"})
CONTAINER_FACTORIES = frozenset({"list", "dict", "set", "frozenset", "tuple", "sorted", "deque", "defaultdict",
                                 "OrderedDict", "Counter"})

# Methods that change the container they are called on.
#: keyword arguments through which an in-place collective takes its buffer
BUFFER_KEYWORDS = ("tensor", "object_list", "tensor_list", "output", "recvbuf", "buf")

MUTATORS = {
    "append", "extend", "add", "update", "insert", "appendleft", "extendleft", "setdefault",
    "put", "put_nowait", "push", "pop", "popleft", "remove", "discard", "clear", "popitem",
}

#: Of those, the ones that put one more element into the container, by the
#: position of the element among their arguments.  Such a call changes the
#: container's length by one whatever the element is: the element's own
#: structure (whether it is None, its length) becomes the structure of one of
#: the container's elements, never the container's own.  (``add`` is not
#: here: whether a set grows depends on the element's value.)
#: Calls that cut a tensor into one piece per size of a list of sizes
#: (``torch.split(t, sizes)``, ``t.split(sizes)``; an int size cuts it into
#: pieces of that size, as many as fit): :func:`~cslint.analysis.stores.split_sizes`.
SPLITTING_CALLS = frozenset({"split"})

ELEMENT_ADDERS = {"append": 0, "appendleft": 0, "put": 0, "put_nowait": 0, "push": 0, "insert": 1,
                  "setdefault": 1}

#: Calls whose failure (OSError and friends) comes from one rank's own disk,
#: network or process table: a function making one may raise on some ranks.
LOCAL_IO_CALLS = frozenset({
    "open", "makedirs", "mkdir", "remove", "unlink", "rename", "replace", "rmtree", "copyfile",
    "read_text", "write_text", "read_bytes", "write_bytes", "urlopen", "check_call", "check_output",
    "connect", "getaddrinfo",
})

#: Exceptions raised the same way on every rank given the same inputs: a
#: missing module or package, a configuration or argument error, a failed
#: ``assert``, the end of an iterator.  (What one rank's disk, memory or
#: network peers make fail -- ``OSError``, ``MemoryError``, ``RuntimeError``
#: -- is not here, nor are ``Exception`` and ``BaseException``.)
UNIFORM_EXCEPTIONS = frozenset({
    "ImportError", "ModuleNotFoundError", "PackageNotFoundError", "NotImplementedError", "AssertionError",
    "ValueError", "TypeError", "KeyError", "IndexError", "LookupError", "AttributeError", "NameError",
    "StopIteration", "StopAsyncIteration", "ZeroDivisionError", "ArithmeticError", "OverflowError",
    "UnicodeError", "UnicodeDecodeError", "UnicodeEncodeError", "JSONDecodeError", "SyntaxError",
    "DeprecationWarning", "UserWarning",
})

#: Exceptions that say a wait found nothing yet (``queue.get(timeout=...)``,
#: ``get_nowait()``, ``future.result(timeout=...)``): when another thread or
#: process hands the item over, not a failure of this rank's own work
#: (:func:`~cslint.analysis.skipped.idle_wait`).  ``Full`` is not one: a put
#: that gave up drops the item.
WAIT_TIMEOUTS = frozenset({"Empty", "TimeoutError"})

#: Modules of host-side numerical functions (canonical dotted prefixes): a
#: call of one computes from its operands alone, so whether it fails
#: (``LinAlgError`` of a singular system, a shape mismatch) follows them, the
#: same on every rank given the same; their file readers and writers aside
#: (:data:`NUMERIC_FILE_CALLS`), which read this rank's own disk.
NUMERIC_MODULES = ("numpy.", "math.", "cmath.", "statistics.")
NUMERIC_FILE_CALLS = frozenset({
    "load", "save", "savez", "savez_compressed", "loadtxt", "savetxt", "genfromtxt", "fromfile", "tofile",
    "memmap", "fromregex", "open_memmap",
})

#: Standard-library introspection of an object's class or signature
#: (canonical names): it reads what the object's type declares, never a file,
#: a device or a peer, so whether it fails (``TypeError`` of an object that is
#: no dataclass) follows the operand's kind, the same on every rank given the
#: same.  (``dataclasses.replace``/``asdict`` are not here: they run the
#: class's own ``__init__`` or copy every field's value.)
INTROSPECTION_CALLS = frozenset({
    "dataclasses.fields", "dataclasses.is_dataclass", "inspect.signature", "inspect.getfullargspec",
    "inspect.isclass", "inspect.isfunction", "inspect.ismethod", "inspect.iscoroutinefunction",
    "inspect.isasyncgenfunction", "inspect.isgeneratorfunction", "inspect.getmro",
})

#: Standard-library computations on the text of a path, a pattern or a
#: command line (canonical names): a pure path made from its parts
#: (``pathlib.Path("out")``: the constructor only splits the text, it never
#: looks at the file system), ``os.path`` arithmetic on names (``join``,
#: ``dirname``; not ``abspath``/``realpath``/``exists``, which ask the
#: process or the disk), a regular expression compiled or escaped, a
#: command line split or quoted.  Each reads its operands alone, so
#: whether it fails (a ``TypeError`` of a part that is no text, a bad
#: pattern) is the same on every rank given the same operands.
TEXT_COMPUTATIONS = frozenset({
    "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.PurePosixPath",
    "pathlib.WindowsPath", "pathlib.PureWindowsPath",
    "os.path.join", "os.path.basename", "os.path.dirname", "os.path.split", "os.path.splitext",
    "os.path.normpath", "os.path.isabs", "os.path.commonprefix",
    "re.compile", "re.escape", "shlex.split", "shlex.quote", "shlex.join",
})

#: The standard library's tests of whether a path names a file or a
#: directory (canonical names): what a configuration loader asks first
#: (configfiles.py) and the one question about the kernel's view of the
#: process answered alike on every node (packagefiles.in_kernel_view).
EXISTENCE_TESTS = frozenset({"os.path.exists", "os.path.isfile", "os.path.isdir"})

#: Tensor factories that copy their operands into a tensor (canonical names):
#: made on the host (no ``device``, or ``device="cpu"``, and not pinned), one
#: fails only as its operands say (a ragged list, a value out of the dtype's
#: range), the same on every rank given the same; on an accelerator, or in
#: pinned memory, its memory is this rank's own.  (A factory of a given size,
#: ``torch.ones(n)``, is not here: a large one can exhaust this node's memory.)
HOST_TENSOR_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor", "torch.from_numpy"})

#: Tensor factories given a size (canonical names) and the positions of their
#: size arguments: ``None`` for sizes spread over the positional arguments
#: (``torch.empty(0, 4)``) or given as one tuple (``torch.empty((0, 4))``),
#: an index for a factory whose size is that argument alone
#: (``torch.full((0,), value)``).  One whose size is written out with a zero
#: among its dimensions holds no elements: making it reserves nothing of this
#: rank's memory, whatever the device, so it fails only as its written-out
#: operands say.
SIZED_TENSOR_FACTORIES = {"torch.empty": None, "torch.zeros": None, "torch.ones": None, "torch.full": 0}

#: Factories that make a tensor shaped like another, on that tensor's device
#: unless told otherwise: like a host tensor, on the host, as large as it.
LIKE_TENSOR_FACTORIES = frozenset({"torch.empty_like", "torch.zeros_like", "torch.ones_like", "torch.full_like"})

#: Methods of a tensor that read it or compute from it where it lives: a
#: conversion to Python values or another dtype, a reduction, a comparison, a
#: shape read or a view.  On a tensor made on the host they run on the host
#: alone and allocate at most what the tensor holds, so they fail as the tensor
#: and the arguments say (a ragged view, an empty reduction); moving it to a
#: device (``to``, ``cuda``), pinning or sharing its memory, or copying another
#: tensor into it are not here.
HOST_TENSOR_METHODS = frozenset({
    "tolist", "item", "numpy", "int", "long", "float", "double", "bool", "half",
    "sum", "prod", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "any", "all", "cumsum",
    "nonzero", "count_nonzero", "unique", "sort", "argsort", "topk",
    "eq", "ne", "lt", "le", "gt", "ge", "equal",
    "size", "numel", "nelement", "dim", "view", "reshape", "flatten", "squeeze", "unsqueeze", "narrow",
    "split", "chunk", "clone", "contiguous",
})

#: Methods of a tensor that make a view of it or read its shape: they read
#: and write the tensor's metadata on the host (sizes, strides, offset), on
#: whatever device its memory lies, touching neither that memory, nor a
#: device, disk or peer, and allocating nothing, so they fail as the
#: tensor's shape and the arguments say.  A reshape or flatten may copy (and
#: allocate), and ``size`` and ``select`` are names other objects use (a
#: queue's size, a selector waiting on sockets): none of them is here.  Read
#: only where no function of the tree answers the call.
VIEW_METHODS = frozenset({
    "view", "view_as", "unsqueeze", "squeeze", "narrow", "transpose", "permute", "expand", "expand_as",
    "unflatten", "dim", "ndimension", "numel", "nelement", "stride", "is_contiguous",
})

#: Methods of a tensor that hand back a tensor (a view, a copy, a layout
#: change): never None, whatever the tensor holds (``noneness.tensor_valued``).
TENSOR_MAKING_METHODS = frozenset({
    "view", "view_as", "unsqueeze", "squeeze", "narrow", "transpose", "permute", "expand", "expand_as",
    "unflatten", "flatten", "reshape", "contiguous", "clone",
})

#: Calls that load a shared library (last dotted part): whether it loads
#: follows the path and the node image, the same for every rank of a job
#: launched on one software environment; a failure is not one rank's own.
LIBRARY_LOADS = frozenset({"CDLL", "LoadLibrary", "load_library", "dlopen", "PyDLL"})

#: Progress-bar wrappers of an iterable (last dotted part): iterating one
#: yields the wrapped iterable's elements in the same order; the other
#: arguments only change what is displayed.
PROGRESS_WRAPPERS = frozenset({"tqdm", "track"})

#: Words of an exception message that name a failure of one rank's own
#: memory, disk, device or network peers (a handler that keeps only such a
#: message handles a rank-local failure).
LOCAL_FAILURE_WORDS = (
    "memory", "oom", "space", "disk", "file", "directory", "permission", "connect", "refused", "reset",
    "timeout", "timed out", "broken pipe", "unreachable", "peer", "socket", "ecc", "device-side",
)

#: Method names too common to find a project's method by the name alone
#: (``resolution``'s lookup by name, ``function``'s untyped method references,
#: the engine's cross-file wrapper names).  ``send``/``recv`` are here as
#: Python's vocabulary, not one API's: sockets, pipes, connections and
#: generators all have them; a project's own ``send`` is still reached through
#: a typed receiver, and the presets' point-to-point calls are matched by
#: pattern, never through this set.
GENERIC_METHODS = {
    "get", "set", "update", "run", "step", "forward", "close", "start", "stop", "wait", "join", "item",
    "append", "extend", "pop", "add", "remove", "clear", "copy", "keys", "values", "items", "format",
    "split", "strip", "read", "write", "send", "recv", "put", "to", "cuda", "cpu", "view", "reshape",
    "size", "numel", "tolist", "sum", "mean", "max", "min", "any", "all", "info", "debug", "warning",
    "error", "exception", "call", "apply", "fn", "func", "main", "init", "reset", "flush", "sort",
    "index", "count", "encode", "decode", "result", "done", "cancel", "submit", "execute", "fetch",
    "state_dict", "load_state_dict", "save", "load", "sync", "synchronize", "wrapper", "inner", "_fn",
    "setup", "build", "create", "process", "handle", "update_state", "backward", "__call__", "_run",
    # a tensor's views and copies: ``layer.weight.narrow(0, lo, n)`` is a tensor far more often
    # than the one project class that happens to define ``narrow``
    "narrow", "chunk", "expand", "permute", "transpose", "contiguous", "flatten", "squeeze", "unsqueeze",
    "clone", "detach", "repeat",
    # a namedtuple's own methods: ``coord._replace(stage=s)`` is a namedtuple far more often than the
    # one project class that happens to define ``_replace``
    "_replace", "_asdict", "_make",
}

#: Calls that make a communicator (the names they are assigned to are communicators).
COMM_FACTORIES = {"Split", "Split_type", "Dup", "Create", "Create_group", "Clone", "Create_cart",
                  "Create_graph", "new_group", "new_subgroups", "Create_intercomm", "Merge", "create_group"}

#: Group factories whose first argument (or ``ranks=``) lists the members.
GROUP_FROM_RANKS = frozenset({"new_group", "create_group"})

#: Group factories whose first argument lists the rank lists of several
#: groups and whose result's first element is the group holding this rank
#: (``sub, _ = new_subgroups_by_enumeration(lists)``): that group's members
#: are the one list of them that holds this rank.
GROUPS_BY_ENUMERATION = frozenset({"new_subgroups_by_enumeration"})


def looks_like_communicator(text: str) -> bool:
    """Whether a receiver's text names a communicator (``dist``, ``self.cpu_group``, ``pg``)."""
    lowered = text.lower()
    for token in ("dist", "comm", "group", "coordinator", "mpi", "nccl", "gloo", "world", "mesh",
                  "communicator", "process_group"):
        if token in lowered:
            return True
    last = lowered.rsplit(".", 1)[-1].strip("_()")
    return last in ("pg", "pgs", "cpu_pg", "device_pg")


#: Array types every row of which (along each axis) has one shape: a number as an index picks
#: what a row holds, never how many rows there are (a mask or a list of positions may pick any)
ARRAY_TYPES = frozenset({"Tensor", "Parameter", "ndarray"})

#: library calls that copy an object with some of its fields changed (``dataclasses.replace(batch,
#: num_reqs=n)``): the copy is an object of the first argument's class, never None, and what the
#: changes hold is its fields' contents (msgspec's ``structs.replace`` copies a ``Struct`` alike)
COPIES_WITH_CHANGES = frozenset({"dataclasses.replace", "copy.replace", "msgspec.structs.replace"})

#: methods of a tensor or array that hand back a piece of it, or the same elements in another shape: a
#: value of the receiver's kind (element type, device, layout), whatever size they are asked for
#: (``x.narrow(0, 0, n)``, ``x.view(-1)``), so a test choosing the size decides no kind (copies.py)
RESIZES_OF_ITSELF = frozenset({"narrow", "view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze",
                               "expand", "repeat", "tile", "repeat_interleave"})
#: library calls that pad their first argument: a larger tensor of its kind, the widths and the fill
#: making its size and contents only (copies.py, ``StructureReads.library_call_parts``)
PADDINGS = frozenset({"torch.nn.functional.pad"})
#: the last names of library calls whose result takes apart what it is given
#: (``StructureReads.library_call_parts``)
LIBRARY_PART_CALLS = LOOKUP_METHODS | STRUCTURE_METHODS | SHAPING_CALLS | KIND_METHODS | frozenset(
    name.rpartition(".")[2] for name in PADDINGS)

#: library calls that bind arguments to a callable (``functools.partial(reduce, workspace=ws)``):
#: the result is a ``partial`` object on every rank, never None, whatever it binds; what the
#: callable and the bound arguments hold is its contents (they decide what calling it does)
PARTIAL_APPLICATIONS = frozenset({"functools.partial"})


#: builtins that read an object they are handed and hand back none of its
#: methods (:func:`reads_object_only`): ``self`` passed to one is not handed on
OBJECT_READERS = frozenset({"getattr", "hasattr", "isinstance", "callable", "id"})


def reads_object_only(call) -> bool:
    """Whether ``call`` of an :data:`OBJECT_READERS` builtin reads its first
    argument only: ``hasattr(x, "a")``, ``isinstance(x, T)``, and
    ``getattr(x, "a", default)`` of a named attribute with a default (a
    value read: a method fetched by name to call has no default)."""
    func = call.func
    if not call.args or call.keywords or any(type(arg) is ast.Starred for arg in call.args):
        return False
    if func.id == "getattr":
        return len(call.args) == 3 and type(call.args[1]) is ast.Constant and type(call.args[1].value) is str
    return len(call.args) <= 2

#: the reduction op names that make a reduced value the largest any rank gave (``op=ReduceOp.MAX``)
MAX_REDUCTIONS = frozenset({"MAX"})
