"""all_reduce (sum, float32) across processes on this machine over gloo:
loom's gloo plugin against PyTorch 1.13's own gloo process group (Debian's
python3-torch), same sizes, same world, one run, side by side.

    /usr/bin/python3 bench/dist_allreduce.py [--world 2] [--reps 50]
        [--sizes 1024,1048576,67108864] [--build build] [--pin]
        [--variants]

Ranks on one machine, so loom's all_reduce runs through shared memory
(plugins/gloo/shm_group.hpp); PyTorch's gloo group uses TCP on loopback.
--variants adds loom over TCP (LOOM_GLOO_SHM=0: what ranks on several
machines use) and loom over TCP with gloo's loop thread under its default
scheduling policy (LOOM_GLOO_LOOP_SCHED=other; plugins/gloo/loop_thread.hpp
says why loom changes it). --pin runs rank r on core r (taskset), every
thread of it: a machine with one core per rank and nothing to spare.

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


def run_world(cmd_for_rank, world, pin=False, env=None):
    def pinned(r, cmd):
        return ["taskset", "-c", str(r % os.cpu_count())] + cmd if pin else cmd
    procs = [subprocess.Popen(pinned(r, cmd_for_rank(r)), stdout=subprocess.PIPE, text=True, env=env)
             for r in range(world)]
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
    p.add_argument("--pin", action="store_true", help="run rank r on core r only (taskset)")
    p.add_argument("--variants", action="store_true",
                   help="also time loom over TCP, and over TCP with gloo's default loop-thread policy")
    p.add_argument("--torch-rank", nargs=3, type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    if a.torch_rank:
        rank, world, port = a.torch_rank
        torch_rank(rank, world, port, a.reps, sizes, sys.stdout)
        return
    exe = os.path.join(a.build, "bin", "dist_allreduce_rank")
    env_note = f"{a.world} processes on 127.0.0.1, float32 sum, medians of {a.reps}" + (", pinned" if a.pin else "")

    def loom_world(env_vars):
        port = free_port()
        return run_world(lambda r: [exe, str(r), str(a.world), f"tcp://127.0.0.1:{port}", str(a.reps)]
                         + [str(s) for s in sizes], a.world, a.pin, dict(os.environ, **env_vars))

    columns = [("loom", loom_world({}))]
    if a.variants:
        columns.append(("loom TCP", loom_world({"LOOM_GLOO_SHM": "0"})))
        columns.append(("TCP, default loop", loom_world({"LOOM_GLOO_SHM": "0", "LOOM_GLOO_LOOP_SCHED": "other"})))
    port = free_port()
    columns.append(("PyTorch", run_world(lambda r: [sys.executable, __file__, "--reps", str(a.reps), "--sizes",
                                                    a.sizes, "--torch-rank", str(r), str(a.world), str(port)],
                                         a.world, a.pin)))
    import torch
    print(f"all_reduce over gloo: {env_note}; PyTorch {torch.__version__}")
    torch_t = columns[-1][1]
    factor = 2 * (a.world - 1) / a.world
    compared = [c for c in columns[:2] if c[0] != "PyTorch"]  # loom, and loom TCP with --variants
    print(f"{'size':>10}" + "".join(f"{name:>19}" for name, _ in columns) + f"{'loom GB/s':>11}{'torch GB/s':>11}"
          + "".join(f"{name + '/torch speed':>22}" for name, _ in compared))
    for s in sizes:
        label = f"{s // 1024} KiB" if s < 1 << 20 else f"{s // (1 << 20)} MiB"
        times = "".join(f"{t[s] * 1e6:>17.1f}us" for _, t in columns)
        ratios = "".join(f"{torch_t[s] / t[s]:>21.2f}x" for _, t in compared)
        print(f"{label:>10}{times}{s * factor / columns[0][1][s] / 1e9:>11.2f}{s * factor / torch_t[s] / 1e9:>11.2f}"
              f"{ratios}")

if __name__ == "__main__":
    main()
