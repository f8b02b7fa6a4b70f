"""all_reduce (sum, float32) across processes on this machine over gloo:
loom's gloo plugin against PyTorch 1.13's own gloo process group (Debian's
python3-torch), same sizes, same world, one run, side by side.

    /usr/bin/python3 bench/dist_allreduce.py [--world 2] [--reps 50]
        [--sizes 1024,1048576,67108864] [--build build]

Latency is the median of --reps calls (each after a barrier); bus bandwidth
is PyTorch's / NCCL-tests' definition for all_reduce: bytes * 2 (n - 1) / n
/ time.
"""
import argparse
import os
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torch_rank(rank, world, port, reps, sizes, out):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    for nbytes in sizes:
        t = torch.ones(nbytes // 4)
        for _ in range(3):
            dist.all_reduce(t)
        times = []
        for _ in range(reps):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - t0)
        times.sort()
        if rank == 0:
            out.write(f"{nbytes} {times[len(times) // 2]:.9f}\n")
            out.flush()
    dist.destroy_process_group()


def run_world(cmd_for_rank, world):
    procs = [subprocess.Popen(cmd_for_rank(r), stdout=subprocess.PIPE, text=True) for r in range(world)]
    outs = [p.communicate(timeout=1200)[0] for p in procs]
    for p in procs:
        if p.returncode != 0:
            sys.exit(f"a rank failed with status {p.returncode}")
    return {int(a): float(b) for a, b in (line.split() for line in outs[0].strip().splitlines())}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--sizes", default="1024,1048576,67108864")
    p.add_argument("--build", default="build")
    p.add_argument("--torch-rank", nargs=3, type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    if a.torch_rank:
        rank, world, port = a.torch_rank
        torch_rank(rank, world, port, a.reps, sizes, sys.stdout)
        return
    exe = os.path.join(a.build, "bin", "dist_allreduce_rank")
    env_note = f"{a.world} processes on 127.0.0.1, float32 sum, medians of {a.reps}"
    port = free_port()
    loom_t = run_world(lambda r: [exe, str(r), str(a.world), f"tcp://127.0.0.1:{port}", str(a.reps)]
                       + [str(s) for s in sizes], a.world)
    port = free_port()
    torch_t = run_world(lambda r: [sys.executable, __file__, "--reps", str(a.reps), "--sizes", a.sizes,
                                   "--torch-rank", str(r), str(a.world), str(port)], a.world)
    import torch
    print(f"all_reduce over gloo: {env_note}; PyTorch {torch.__version__}")
    print(f"{'size':>10}{'loom':>12}{'PyTorch':>12}{'loom GB/s':>11}{'torch GB/s':>11}{'loom/torch speed':>18}")
    factor = 2 * (a.world - 1) / a.world
    for s in sizes:
        lt, tt = loom_t[s], torch_t[s]
        label = f"{s // 1024} KiB" if s < 1 << 20 else f"{s // (1 << 20)} MiB"
        print(f"{label:>10}{lt * 1e6:>10.1f}us{tt * 1e6:>10.1f}us{s * factor / lt / 1e9:>11.2f}"
              f"{s * factor / tt / 1e9:>11.2f}{tt / lt:>17.2f}x")


if __name__ == "__main__":
    main()
