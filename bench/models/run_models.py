"""Whole models under loom and under PyTorch, side by side (issue 22).

    PYTHONPATH=build/python python3 bench/models/run_models.py            # CPU, 1 and 2 threads
    python3 bench/models/run_models.py --device cuda --config cuda        # on a GPU
    python3 bench/models/run_models.py --models gpt --threads 2 --profile  # + loom's per-op table
    PYTHONPATH=build/python python3 bench/models/run_models.py --ddp 2    # data-parallel, 2 processes

Each model file (gpt.py, resnet.py, lstm.py, mlp.py) holds its model code once,
written against the PyTorch API, and is built with `import loom as torch`
and with PyTorch itself. For each model and thread count this script runs
two worker processes: PyTorch first, which saves its initial weights, then
loom, which loads them, so both start from the same weights and batch. Each
worker reports the first step's loss, the median of the timed training
steps (zero_grad, forward, loss, backward, optimizer step), the median
inference forward where the model has one, and its peak memory (the
process's peak resident set on the CPU, the allocator's peak on a GPU). A
process each keeps one library's threads, caches and memory out of the
other's figures.

--ddp N trains each model a second time in N processes on 127.0.0.1 with
DistributedDataParallel over gloo (one thread each; rank r's batch drawn
from seed r, so rank 0's is the single process's batch), and prints the
step at 1 and N processes for both libraries: DDP's overhead over one
process and loom's DDP step against PyTorch's.
"""
import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ("gpt", "resnet", "lstm", "mlp")


# ---- worker: one library, one model ------------------------------------------------------
def _sync(torch, device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _peak_memory_mb(torch, device):
    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated() / 2**20
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _median_ms(fn, torch, device, steps):
    times = []
    for _ in range(steps):
        _sync(torch, device)
        t0 = time.perf_counter()
        fn()
        _sync(torch, device)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def _save_weights(model, path):
    import numpy as np
    np.savez(path, **{k: v.detach().cpu().float().numpy() for k, v in model.state_dict().items()})


def _load_weights(torch, model, path):
    """The saved weights into `model`; every entry of its state_dict must be
    there. Entries only the other library's model has (the causal-mask
    buffer of the attention without a fused kernel) are left out."""
    import numpy as np
    wanted = set(model.state_dict())
    with np.load(path) as f:
        missing = wanted - set(f.files)
        if missing:
            raise SystemExit(f"the saved weights lack {sorted(missing)}")
        state = {k: torch.tensor(f[k]) for k in f.files if k in wanted}
    model.load_state_dict(state)


def worker(args):
    import numpy as np
    torch = importlib.import_module(args.library)
    spec = importlib.import_module(args.model)
    cfg = spec.CONFIGS[args.config]
    torch.set_num_threads(int(args.threads))
    ddp = args.world > 1
    if ddp:
        dist = importlib.import_module(f"{args.library}.distributed")
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}", rank=args.rank,
                                world_size=args.world)
    torch.manual_seed(0)
    model = spec.build(torch, cfg)
    if args.library == "torch":
        if args.rank == 0:
            _save_weights(model, args.weights)
    else:
        _load_weights(torch, model, args.weights)
    dtype = getattr(torch, args.dtype)
    model = model.to(args.device)
    if args.dtype != "float32":
        model = model.to(dtype)
    if ddp:
        model = importlib.import_module(f"{args.library}.nn.parallel").DistributedDataParallel(model)
    inputs, targets = spec.batch(torch, cfg, args.device, np.random.default_rng(args.rank))
    if args.dtype != "float32" and inputs.is_floating_point():
        inputs = inputs.to(dtype)
    opt = spec.optimizer(torch, model, cfg)
    model.train()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = spec.loss(torch, model, inputs, targets)
        loss.backward()
        opt.step()
        return loss

    result = {"library": args.library, "version": getattr(torch, "__version__", "?")}
    result["first_loss"] = float(step().item())
    for _ in range(args.warmup):
        step()
    profile = None
    if args.profile and args.library == "loom" and hasattr(torch, "profiler"):
        with torch.profiler.profile() as prof:
            step()
            _sync(torch, args.device)
        profile = prof.key_averages().table(row_limit=args.profile_rows)
    result["step_ms"] = _median_ms(step, torch, args.device, args.steps)
    if ddp:
        dist.destroy_process_group()
    elif spec.HAS_INFERENCE:
        model.eval()
        with torch.no_grad():
            result["infer_ms"] = _median_ms(lambda: model(inputs), torch, args.device, args.steps)
    result["peak_mb"] = _peak_memory_mb(torch, args.device)
    if args.rank == 0:
        print(json.dumps(result))
    if profile:
        print(profile, file=sys.stderr)


# ---- driver ------------------------------------------------------------------------------
def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_worker(library, model, threads, weights, args, world=1):
    """Rank 0's figures of `world` worker processes (one: no DDP)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--library", library, "--models", model,
           "--threads", str(threads), "--weights", weights, "--device", args.device, "--config", args.config,
           "--dtype", args.dtype, "--steps", str(args.steps), "--warmup", str(args.warmup), "--world", str(world),
           "--port", str(_free_port() if world > 1 else 0)]
    if args.profile:
        cmd += ["--profile", "--profile-rows", str(args.profile_rows)]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    procs = [subprocess.Popen(cmd + ["--rank", str(r)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env) for r in range(world)]
    outs = [p.communicate() for p in procs]
    for r, (p, (_, err)) in enumerate(zip(procs, outs)):
        if p.returncode != 0:
            raise SystemExit(f"the {library} worker for {model} (rank {r} of {world}) failed "
                             f"(exit {p.returncode}):\n{err}")
    out, err = outs[0]
    if err.strip():
        print(f"--- {library}, {model}, {threads} thread(s):\n{err.rstrip()}", file=sys.stderr)
    return json.loads(out.strip().splitlines()[-1])


def _fmt(v, unit):
    return "-" if v is None else f"{v:.2f} {unit}"


def driver(args):
    models = args.models.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    print(f"device {args.device}, config {args.config}, dtype {args.dtype}; medians of {args.steps} steps "
          f"after {args.warmup + 1} warm-up")
    header = (f"{'model':<10}{'thr':>4}{'loss loom':>11}{'loss torch':>11}{'step loom':>12}{'step torch':>12}"
              f"{'speed':>7}{'infer loom':>12}{'infer torch':>12}{'speed':>7}{'peak loom':>12}{'peak torch':>12}")
    print(header)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            for t in threads:
                weights = os.path.join(tmp, f"{model}.npz")
                ref = _run_worker("torch", model, t, weights, args)
                got = _run_worker("loom", model, t, weights, args)
                speed = ref["step_ms"] / got["step_ms"]
                infer_speed = (ref["infer_ms"] / got["infer_ms"]) if "infer_ms" in got else None
                print(f"{model:<10}{t:>4}{got['first_loss']:>11.5f}{ref['first_loss']:>11.5f}"
                      f"{_fmt(got['step_ms'], 'ms'):>12}{_fmt(ref['step_ms'], 'ms'):>12}{speed:>6.2f}x"
                      f"{_fmt(got.get('infer_ms'), 'ms'):>12}{_fmt(ref.get('infer_ms'), 'ms'):>12}"
                      f"{'-' if infer_speed is None else f'{infer_speed:.2f}x':>7}"
                      f"{_fmt(got['peak_mb'], 'MB'):>12}{_fmt(ref['peak_mb'], 'MB'):>12}", flush=True)
                rows.append({"model": model, "threads": t, "loom": got, "torch": ref})
                if abs(got["first_loss"] - ref["first_loss"]) > args.loss_tol * max(1.0, abs(ref["first_loss"])):
                    raise SystemExit(f"{model}: the first loss differs: loom {got['first_loss']}, "
                                     f"PyTorch {ref['first_loss']} (same weights and batch)")
    print(f"speed = PyTorch time / loom time (above 1: loom is faster); PyTorch {rows[0]['torch']['version']}")
    if args.ddp > 1:
        ddp_driver(args, models, rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


def ddp_driver(args, models, rows):
    """Each model at one process and at --ddp processes, one thread each, both libraries, run back to
    back (this machine's speed drifts between minutes: the single-process rows above are too far away
    to divide by)."""
    n = args.ddp
    print(f"\nDistributedDataParallel over gloo, {n} processes on 127.0.0.1, one thread each; step medians")
    print(f"{'model':<10}{'loom 1p':>11}{f'loom x{n}':>11}{'torch 1p':>11}{f'torch x{n}':>11}{'loom ovh':>10}"
          f"{'torch ovh':>10}{'loom/torch DDP':>16}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            weights = os.path.join(tmp, f"{model}.npz")
            t1 = _run_worker("torch", model, 1, weights, args)
            l1 = _run_worker("loom", model, 1, weights, args)
            tn = _run_worker("torch", model, 1, weights, args, world=n)
            ln = _run_worker("loom", model, 1, weights, args, world=n)
            if abs(ln["first_loss"] - tn["first_loss"]) > args.loss_tol * max(1.0, abs(tn["first_loss"])):
                raise SystemExit(f"{model} under DDP: rank 0's first loss differs: loom {ln['first_loss']}, "
                                 f"PyTorch {tn['first_loss']} (same weights and batch)")
            lo, to = ln["step_ms"] / l1["step_ms"], tn["step_ms"] / t1["step_ms"]
            print(f"{model:<10}{l1['step_ms']:>9.1f}ms{ln['step_ms']:>9.1f}ms{t1['step_ms']:>9.1f}ms"
                  f"{tn['step_ms']:>9.1f}ms{lo:>9.2f}x{to:>9.2f}x{ln['step_ms'] / tn['step_ms']:>15.2f}x", flush=True)
            rows.append({"model": model, "threads": 1, "ddp": n, "loom": [l1, ln], "torch": [t1, tn]})
    print("ovh: the DDP step over the single-process step (same per-rank batch); loom/torch DDP: step time ratio")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated: " + ", ".join(MODELS))
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts (CPU)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--config", default=None, help="size preset of each model file (cpu, cuda, small)")
    p.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    p.add_argument("--steps", type=int, default=5, help="timed training steps (median reported)")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--loss-tol", type=float, default=1e-3, help="relative first-loss tolerance")
    p.add_argument("--profile", action="store_true", help="print loom's per-op table of one step")
    p.add_argument("--profile-rows", type=int, default=25)
    p.add_argument("--json", help="also write the figures here")
    p.add_argument("--ddp", type=int, default=0, metavar="N",
                   help="also train in N processes with DistributedDataParallel, one thread each")
    p.add_argument("--world", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--library", help=argparse.SUPPRESS)
    p.add_argument("--weights", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.config is None:
        args.config = "cuda" if args.device.startswith("cuda") else "cpu"
    sys.path.insert(0, HERE)
    if args.worker:
        args.model = args.models
        worker(args)
    else:
        driver(args)


if __name__ == "__main__":
    main()
