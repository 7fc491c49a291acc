"""Run the replica's generation server on one backend.

    mpiexec -n 4 python run_gen_server.py --backend mpi --draft-len 3 --out DIR
    python run_gen_server.py --backend gloo --ranks 4 --pp --out DIR
    python run_gen_server.py --backend nccl --ranks 2 --out DIR     # one GPU per rank
    python run_gen_server.py --backend local --out DIR              # single-rank reference

Every rank writes ``DIR/rank<R>.json`` with the tokens of the requests it
answered.  The collective sanitizer (``cslint.runtime``) is switched on with
``--sanitize`` or ``CSLINT_SANITIZE=1``; its per-rank state files go to
``--report-dir`` (or ``CSLINT_REPORT_DIR``).

Exit status: 0 done; 2 bad arguments; 3 backend not available; other values
come from the ranks (137: the hang detector aborted the job).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=["local", "mpi", "gloo", "nccl"], default="mpi")
    p.add_argument("--ranks", type=int, default=2, help="ranks to fork (gloo/nccl); mpi takes mpiexec's -n")
    p.add_argument("--pp", action="store_true", help="pipeline parallel GEN server instead of attention-DP")
    p.add_argument("--draft-len", type=int, default=3)
    p.add_argument("--spec", choices=["asym", "sym"], default="asym",
                   help="asym: drafter on the GEN worker only; sym: on ctx and gen")
    p.add_argument("--fill-gate", choices=["on", "off"], default="on")
    p.add_argument("--overlap", action="store_true", help="attention-DP with the overlap scheduler")
    p.add_argument("--rebalance-every", type=int, default=0,
                   help="overlap loop: agree on a KV-pool rebalance every N iterations (0: never)")
    p.add_argument("--shutdown", choices=["none", "drain"], default="none",
                   help="drain: serve until a shutdown request (sent once the burst is delivered), each rank "
                        "then drains its own requests")
    p.add_argument("--fault-request", type=int, default=None,
                   help="the forward of the batch holding this request fails on its rank (a fatal error)")
    p.add_argument("--requests", type=int, default=8, help="burst size (all submitted up front)")
    p.add_argument("--max-new-tokens", type=int, default=6)
    p.add_argument("--model", choices=["auto", "torch", "numpy"], default="auto")
    p.add_argument("--out", required=True)
    p.add_argument("--sanitize", action="store_true")
    p.add_argument("--report-dir", default=None)
    p.add_argument("--sanitizer-timeout", type=float, default=2.0)
    p.add_argument("--hang-timeout", type=float, default=300.0)
    return p.parse_args(argv)


def build_executor(args, dist, device: str = "cpu"):
    from tensorrt_llm._torch.disaggregation.transceiver import (
        ContextServer,
        KvCacheTransceiver,
        SpecConfig,
        burst_prompts,
    )
    from tensorrt_llm._torch.models.tiny_decoder import build_model
    from tensorrt_llm._torch.pyexecutor.hang_detector import HangDetector
    from tensorrt_llm._torch.pyexecutor.py_executor import PyExecutor, abort_job

    model = build_model(args.model, device=device)
    spec = SpecConfig(draft_len=args.draft_len, on_ctx=(args.spec == "sym"), on_gen=args.draft_len > 0)
    num_requests = args.requests
    prompts = burst_prompts(num_requests)
    ctx = ContextServer(model, prompts, args.max_new_tokens)
    attention_dp = not args.pp and args.world_size > 1
    transceiver = KvCacheTransceiver(dist, ctx, spec, attention_dp=attention_dp)
    detector = HangDetector(timeout_s=args.hang_timeout, on_hang=lambda: abort_job(dist), rank=dist.rank)
    return PyExecutor(
        dist, model, transceiver, spec,
        enable_attention_dp=attention_dp,
        benchmark_req_queues_size=num_requests if args.fill_gate == "on" else 0,
        max_batch_size=8,
        kv_blocks_total=num_requests,
        hang_detector=detector,
        overlap=args.overlap,
        rebalance_every=args.rebalance_every,
        serve_until_shutdown=args.shutdown == "drain",
        fault_request=args.fault_request,
    )


def maybe_sanitize(args, dist):
    if not (args.sanitize or os.environ.get("CSLINT_SANITIZE") == "1"):
        return dist
    try:
        from cslint.runtime import wrap
    except ImportError:
        # running from the cslint checkout (examples/trtllm_replica): use the checkout's cslint
        checkout = os.path.dirname(os.path.dirname(HERE))
        if os.path.isdir(os.path.join(checkout, "cslint", "runtime")):
            sys.path.append(checkout)
    try:
        from cslint.runtime import wrap
    except ImportError as exc:
        print(f"error: --sanitize needs cslint importable ({exc})", file=sys.stderr)
        sys.exit(3)
    report_dir = args.report_dir or os.environ.get("CSLINT_REPORT_DIR") or os.path.join(args.out, "sanitizer")
    return wrap(dist, report_dir=report_dir, timeout=args.sanitizer_timeout)


def run_rank(args, dist, device: str = "cpu") -> int:
    dist = maybe_sanitize(args, dist)
    executor = build_executor(args, dist, device)
    started = time.monotonic()
    outputs = executor.run()
    elapsed = time.monotonic() - started
    os.makedirs(args.out, exist_ok=True)
    record = {"rank": dist.rank, "world_size": dist.world_size, "outputs": {str(k): v for k, v in outputs.items()},
              "forward_steps": executor.iter_counter, "loop_iterations": executor.loop_iter, "seconds": elapsed,
              "owned": sorted(executor.requests_by_id), "rebalances": executor.rebalances,
              "dummy_passes": executor.dummy_passes}
    tmp = os.path.join(args.out, f".rank{dist.rank}.json.tmp")
    with open(tmp, "w") as fh:
        json.dump(record, fh)
    os.replace(tmp, os.path.join(args.out, f"rank{dist.rank}.json"))
    close = getattr(dist, "close", None)
    if callable(close):
        close()
    return 0


def _torch_child(args, rank: int, store_path: str, backend: str) -> None:
    import torch
    import torch.distributed as tdist
    from tensorrt_llm._torch.distributed.communicator import TorchDist

    device = "cpu"
    if backend == "nccl":
        torch.cuda.set_device(rank)
        device = f"cuda:{rank}"
    store = tdist.FileStore(store_path, args.world_size)
    tdist.init_process_group(backend, store=store, rank=rank, world_size=args.world_size)
    tp, pp = (1, args.world_size) if args.pp else (args.world_size, 1)
    dist = TorchDist(tp_size=tp, pp_size=pp)
    code = 1
    try:
        code = run_rank(args, dist, device)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def launch_forked(args) -> int:
    """Fork one process per rank (gloo/nccl) and reap them all."""
    import multiprocessing as mp
    import tempfile

    try:
        import torch  # imported once here, inherited by the forked ranks
    except ImportError:
        print("error: torch is not installed; the gloo/nccl backends need it", file=sys.stderr)
        return 3
    if args.backend == "nccl":
        # count GPUs through NVML: initialising CUDA here would break it in the forked ranks
        os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
        gpus = torch.cuda.device_count()
        if gpus < args.world_size:
            print(f"error: nccl needs one GPU per rank: {args.world_size} ranks, {gpus} GPU(s)", file=sys.stderr)
            return 3
    ctx = mp.get_context("fork")
    store_dir = tempfile.mkdtemp(prefix="replica-store-")
    store_path = os.path.join(store_dir, "store")
    procs = [ctx.Process(target=_torch_child, args=(args, r, store_path, args.backend)) for r in range(args.world_size)]
    for proc in procs:
        proc.start()
    code = 0
    pending = list(procs)
    failed_at = None
    while pending:
        for proc in list(pending):
            proc.join(timeout=0.05)
            if proc.exitcode is not None:
                pending.remove(proc)
                if proc.exitcode != 0 and code == 0:
                    code = proc.exitcode if proc.exitcode > 0 else 128 - proc.exitcode
                    failed_at = time.monotonic()
        # One rank died: the others cannot finish their collectives; give them
        # a moment to write their state, then take them down.
        if failed_at is not None and time.monotonic() - failed_at > 1.5:
            for proc in pending:
                proc.kill()
            for proc in pending:
                proc.join()
            pending = []
    try:
        os.remove(store_path)
        os.rmdir(store_dir)
    except OSError:
        pass
    return code


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.draft_len < 0 or args.max_new_tokens < 1:
        print("error: --draft-len must be >= 0 and --max-new-tokens >= 1", file=sys.stderr)
        return 2
    if args.backend == "local":
        from tensorrt_llm._torch.distributed.communicator import LocalDist

        args.world_size = 1
        return run_rank(args, LocalDist())
    if args.backend == "mpi":
        try:
            from mpi4py import MPI
        except ImportError:
            print("error: mpi4py is not installed", file=sys.stderr)
            return 3
        from tensorrt_llm._torch.distributed.communicator import MPIDist

        args.world_size = MPI.COMM_WORLD.Get_size()
        tp, pp = (1, args.world_size) if args.pp else (args.world_size, 1)
        device = "cpu"
        if args.model != "numpy":
            try:
                import torch
            except ImportError:
                torch = None
            if torch is not None and torch.cuda.is_available():
                # one GPU per rank when there are enough; ranks share GPUs otherwise
                # (MPI carries the collectives, the GPUs only run the model)
                gpu = MPI.COMM_WORLD.Get_rank() % torch.cuda.device_count()
                torch.cuda.set_device(gpu)
                device = f"cuda:{gpu}"
        return run_rank(args, MPIDist(tp_size=tp, pp_size=pp), device)
    if args.ranks < 1:
        print("error: --ranks must be >= 1", file=sys.stderr)
        return 2
    args.world_size = args.ranks
    return launch_forked(args)


if __name__ == "__main__":
    sys.exit(main())
