"""mpi4py: collective methods of ``Comm`` objects.

Lower-case ``gather``/``scatter``/``reduce`` count only on a receiver that
looks like a communicator (``comm``, ``MPI.COMM_WORLD``, ``self.mpi_comm``),
since ``torch.gather`` and ``tensor.gather`` are not collectives.
"""

from __future__ import annotations

from .specs import (
    KIND_RANK_ID,
    PREDICATE,
    AgreementTemplate,
    CollectiveSpec,
    NeutralTable,
    Preset,
    SourceSpec,
)

_M = "mpi"

# name -> (result, inplace positions, receiver requirement)
_METHODS = {
    "allreduce": ("uniform", (), "comm"),
    "Allreduce": ("uniform", (1,), "any"),
    "bcast": ("uniform", (), "comm"),
    "Bcast": ("uniform", (0,), "any"),
    "allgather": ("uniform", (), "comm"),
    "Allgather": ("uniform", (1,), "any"),
    "Allgatherv": ("uniform", (1,), "any"),
    "gather": ("local", (), "comm"),
    "Gather": ("local", (), "any"),
    "Gatherv": ("local", (), "any"),
    "scatter": ("local", (), "comm"),
    "Scatter": ("local", (), "any"),
    "Scatterv": ("local", (), "any"),
    "reduce": ("local", (), "comm"),
    "Reduce": ("local", (), "any"),
    "barrier": ("uniform", (), "comm"),
    "Barrier": ("uniform", (), "any"),
    "alltoall": ("local", (), "comm"),
    "Alltoall": ("local", (), "any"),
    "Alltoallv": ("local", (), "any"),
    "Reduce_scatter": ("local", (), "any"),
    "Reduce_scatter_block": ("local", (), "any"),
    "Scan": ("local", (), "any"),
    "Exscan": ("local", (), "any"),
    "Dup": ("uniform", (), "comm"),
    "Split": ("object", (), "comm"),
    "Split_type": ("object", (), "comm"),
    "Iallreduce": ("uniform", (1,), "any"),
    "Ibcast": ("uniform", (0,), "any"),
    "Ibarrier": ("uniform", (), "any"),
    "Iallgather": ("uniform", (1,), "any"),
}

# How a rank that contributes nothing still takes part (see CollectiveSpec.join).
_JOIN = {"allreduce": "mpi.reduce", "allgather": "consumption", "barrier": "none", "Barrier": "none"}

_collectives = [
    CollectiveSpec("*." + name, _M, result=result, inplace=inplace, receiver=receiver, payload_kw=("sendobj",),
                   join=_JOIN.get(name, ""), agreement="mpi4py",
                   **({"root_arg": 1, "root_kw": ("root",)} if name == "bcast" else {}))
    for name, (result, inplace, receiver) in _METHODS.items()
]

_AGREEMENTS = {
    "mpi4py": AgreementTemplate(test=f"{{receiver}}.allreduce(bool({PREDICATE}), op=MPI.LOR)",
                                imports=("from mpi4py import MPI",),
                                all_test=f"{{receiver}}.allreduce(bool({PREDICATE}), op=MPI.LAND)"),
}

# The identity of each op of the lower-case (pickled object) allreduce, for a
# payload that is visibly a number.
_NEUTRALS = {
    "mpi.reduce": NeutralTable(
        identities=(("SUM", "0"), ("PROD", "1"), ("MAX", "float('-inf')"), ("MIN", "float('inf')"),
                    ("LAND", "True"), ("LOR", "False"), ("BAND", "-1"), ("BOR", "0"), ("BXOR", "0")),
        default="SUM", op="op", op_arg=1, numeric_payload=True,
    ),
}

PRESET = Preset(
    name="mpi4py",
    agreements=_AGREEMENTS,
    neutrals=_NEUTRALS,
    collectives=_collectives,
    not_collectives=["*.send", "*.recv", "*.isend", "*.irecv", "*.Send", "*.Recv", "*.Isend",
                     "*.Irecv", "*.sendrecv", "*.Sendrecv", "*.probe", "*.Probe", "*.iprobe"],
    # the lowercase ``recv`` unpickles and hands back the object; ``Recv`` fills a buffer
    p2p_receives=["recv"],
    p2p_sends=["send", "isend", "Send", "Isend"],
    p2p_peer_keywords=["source", "dest"],
    sources=[
        SourceSpec("*.Get_rank", KIND_RANK_ID),
        SourceSpec("MPI.Wtime", "wall clock"),
        SourceSpec("mpi4py.MPI.Wtime", "wall clock"),
        SourceSpec("MPI.Get_processor_name", "host name"),
    ],
    uniform=["*.Get_size", "*.COMM_WORLD.size", "MPI.*"],
)
