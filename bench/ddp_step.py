"""The DDP training step of the digits MLP: loom against PyTorch 1.13, 1 and 2 processes, one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/ddp_step.py [--rounds 3] [--steps 300]
        [--configs 64-256-256-10:32,64-256-256-10:1024,64-1024-1024-10:256]

For each config (layer widths : per-rank batch; the default: the digits
MLP at batch 32, the same at batch 1024, and a wider MLP at 256, so that
not only latency is measured) these setups, side by side: loom and PyTorch
in one process training on the per-rank batch (a plain module); loom and
PyTorch in two processes on 127.0.0.1, each rank on its own per-rank batch,
the module wrapped in DistributedDataParallel over gloo (25 MiB buckets, the
default of both; PyTorch also closes its first bucket at 1 MiB, loom does
not); and two single loom processes
training at once without communication, which shows what sharing the
machine's two cores costs by itself. A step is zero_grad(set_to_none),
forward, cross-entropy, backward (with DDP: the gradient all-reduce) and an
Adam step. Every process uses one intra-op thread (OMP_NUM_THREADS=1 and
set_num_threads(1) in both libraries): two ranks on this 2-core machine, one
core each, the single-process setups on one core too. Each process times
every step after a warm-up; the figure of one run is rank 0's median step
(the ranks move in lockstep). The setups run one after the other,
--rounds times, interleaved; the table gives the median over rounds.

Ratios printed (the targets of the distributed issue): DDP overhead = DDP
step at 2 processes / single-process step at the same per-rank batch
(target <= 1.3x, for loom), and loom DDP / PyTorch DDP step time (target
<= 1.0x).
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

DEFAULT_CONFIGS = "64-256-256-10:32,64-256-256-10:1024,64-1024-1024-10:256"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_configs(text):
    out = []
    for item in text.split(","):
        widths, batch = item.split(":")
        out.append(([int(w) for w in widths.split("-")], int(batch)))
    return out


# ---- one rank: one library, every config ----------------------------------------------
def rank_main(library, rank, world, port, configs, steps, warmup, independent):
    import numpy as np
    lib = __import__(library)
    lib.set_num_threads(1)
    ddp = world > 1 and not independent
    if ddp:
        import importlib
        dist = importlib.import_module(f"{library}.distributed")
        DDP = importlib.import_module(f"{library}.nn.parallel").DistributedDataParallel
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    nn = lib.nn
    results = []
    for widths, batch in configs:
        lib.manual_seed(0)
        layers = []
        for i in range(len(widths) - 1):
            layers.append(nn.Linear(widths[i], widths[i + 1]))
            if i < len(widths) - 2:
                layers.append(nn.ReLU())
        model = nn.Sequential(*layers)
        if ddp:
            model = DDP(model)
        rng = np.random.default_rng(rank)  # each rank its own rows
        x = lib.tensor(rng.random((batch, widths[0]), dtype=np.float32))
        y = lib.tensor(rng.integers(0, widths[-1], batch))
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = nn.CrossEntropyLoss()

        def step():
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()

        for _ in range(warmup):
            step()
        if ddp:
            dist.barrier()
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
        results.append(statistics.median(times))
    if ddp:
        dist.destroy_process_group()
    if rank == 0:
        print(json.dumps(results))


def run_setup(library, world, args, independent=False):
    """Rank 0's medians, one per config: `world` processes of `library`, a DDP world
    (or, `independent`, as many single processes training side by side)."""
    port = free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    common = ["--configs", args.configs, "--steps", str(args.steps), "--warmup", str(args.warmup)]
    if independent:
        common.append("--independent")
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--rank", library, str(r), str(world),
                               str(port)] + common, stdout=subprocess.PIPE, env=env, text=True) for r in range(world)]
    outs = [p.communicate(timeout=1200)[0] for p in procs]
    for r, p in enumerate(procs):
        if p.returncode != 0:
            sys.exit(f"{library}, {world} process(es): rank {r} failed with status {p.returncode}")
    return json.loads(outs[0].strip().splitlines()[-1])


SETUPS = [("loom", 1), ("loom", 2), ("torch", 1), ("torch", 2)]
BUSY = ("loom", 2, "independent")  # two single loom processes at once: the machine's own slowdown


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--configs", default=DEFAULT_CONFIGS, help="widths:per-rank batch, comma-separated")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--rank", nargs=4, metavar=("LIBRARY", "RANK", "WORLD", "PORT"), help=argparse.SUPPRESS)
    p.add_argument("--independent", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    configs = parse_configs(a.configs)
    if a.rank:
        library, rank, world, port = a.rank
        rank_main(library, int(rank), int(world), int(port), configs, a.steps, a.warmup, a.independent)
        return
    try:
        import torch
        version = f"PyTorch {torch.__version__}"
    except ImportError:  # loom alone
        torch, version = None, "PyTorch not installed (python3-torch): loom alone"
    setups = SETUPS if torch else [s for s in SETUPS if s[0] == "loom"]
    print(f"DDP training step (forward, backward + gradient all-reduce, Adam), gloo on 127.0.0.1; one intra-op "
          f"thread per rank; medians of {a.steps} steps (rank 0), {a.rounds} rounds; {version}")
    rounds = []  # per round: {setup: [median seconds per config]}
    for r in range(a.rounds):
        got = {s: run_setup(s[0], s[1], a) for s in setups}
        got[BUSY] = run_setup("loom", 2, a, independent=True)
        rounds.append(got)
        line = "; ".join(f"{'-'.join(map(str, w))} b{b}: " + " ".join(
            f"{s[0]}x{s[1]}{'i' if len(s) > 2 else ''} {got[s][c] * 1e3:.3f}" for s in setups + [BUSY])
            for c, (w, b) in enumerate(configs))
        print(f"round {r + 1}: {line} (ms)", flush=True)
    print(f"{'config (per-rank batch)':24}{'loom 1p':>10}{'loom 2x1p':>10}{'loom DDP':>10}{'torch 1p':>10}"
          f"{'torch DDP':>10}{'loom ovh':>9}{'torch ovh':>10}{'loom/torch DDP':>15}")
    for c, (w, b) in enumerate(configs):
        med = {s: statistics.median(rd[s][c] for rd in rounds) * 1e3 for s in setups + [BUSY]}
        l1, l2 = med[("loom", 1)], med[("loom", 2)]
        label = f"{'-'.join(map(str, w))}, b{b}"
        row = f"{label:24}{l1:>8.3f}ms{med[BUSY]:>8.3f}ms{l2:>8.3f}ms"
        if torch:
            t1, t2 = med[("torch", 1)], med[("torch", 2)]
            row += f"{t1:>8.3f}ms{t2:>8.3f}ms{l2 / l1:>8.2f}x{t2 / t1:>9.2f}x{l2 / t2:>14.2f}x"
        else:
            row += f"{'-':>10}{'-':>10}{l2 / l1:>8.2f}x{'-':>10}{'-':>15}"
        print(row)
    print("ovh: DDP step at 2 processes / 1-process step at the same per-rank batch (target for loom <= 1.3x); "
          "loom/torch DDP: step time ratio (target <= 1.0x); loom 2x1p: two single processes training at "
          "once, no communication (what sharing the machine costs by itself)")

if __name__ == "__main__":
    main()
