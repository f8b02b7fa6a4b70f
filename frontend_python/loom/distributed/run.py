"""Starts the processes of a distributed job on this node, as torchrun does:

    python3 -m loom.distributed.run --nproc-per-node 2 train.py --epochs 3
    python3 -m loom.distributed.run --nnodes 2 --node-rank 0 --nproc-per-node 4 \\
        --master-addr 10.0.0.1 --master-port 29500 train.py

Each process gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
MASTER_PORT (so init_process_group's env:// finds its peers). When any exits
with a non-zero status or a signal, the others are stopped (SIGTERM, then
SIGKILL after --grace seconds; each rank runs in a process group of its own,
so what it started goes too) and the launcher exits non-zero naming the rank
and its status. SIGINT / SIGTERM to the launcher stop every rank the same way.
"""
import argparse
import os
import signal
import subprocess
import sys
import time


def _parse(argv):
    p = argparse.ArgumentParser(prog="python3 -m loom.distributed.run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1, dest="nproc")
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", "--node_rank", type=int, default=0, dest="node_rank")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1", dest="master_addr")
    p.add_argument("--master-port", "--master_port", type=int, default=29500, dest="master_port")
    p.add_argument("--grace", type=float, default=5.0, help="seconds between SIGTERM and SIGKILL when stopping ranks")
    p.add_argument("-m", "--module", action="store_true", help="run the target as a module (python3 -m)")
    p.add_argument("--no-python", action="store_true", help="the target is an executable, not a Python script")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    if a.nproc < 1 or a.nnodes < 1:
        p.error("--nproc-per-node and --nnodes must be at least 1")
    if not 0 <= a.node_rank < a.nnodes:
        p.error(f"--node-rank {a.node_rank} is not in 0..{a.nnodes - 1}")
    return a


def _describe(status):
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"was killed by {name}"
    return f"exited with status {status}"


def _signal_live(procs, signum):
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signum)
            except ProcessLookupError:
                pass


def _stop(procs, grace):
    _signal_live(procs, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(p.poll() is None for p in procs):
        time.sleep(0.05)
    _signal_live(procs, signal.SIGKILL)
    for p in procs:
        p.wait()


def main(argv=None):
    a = _parse(sys.argv[1:] if argv is None else argv)
    world = a.nnodes * a.nproc
    if a.no_python:
        target = [a.script]
    elif a.module:
        target = [sys.executable, "-m", a.script]
    else:
        target = [sys.executable, a.script]
    procs, ranks = [], []
    stopping = {"signal": None}

    def on_signal(signum, frame):
        stopping["signal"] = signum

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    for local in range(a.nproc):
        rank = a.node_rank * a.nproc + local
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(world),
                   LOCAL_WORLD_SIZE=str(a.nproc), GROUP_RANK=str(a.node_rank), MASTER_ADDR=a.master_addr,
                   MASTER_PORT=str(a.master_port))
        try:
            procs.append(subprocess.Popen(target + a.args, env=env, start_new_session=True))
        except OSError as e:
            _stop(procs, a.grace)
            sys.exit(f"loom.distributed.run: cannot start rank {rank} ({' '.join(target)}): {e}")
        ranks.append(rank)
    failed = None
    while True:
        if stopping["signal"] is not None:
            _stop(procs, a.grace)
            sys.stderr.write(f"loom.distributed.run: stopped every rank on {signal.Signals(stopping['signal']).name}\n")
            return 128 + stopping["signal"]
        running = 0
        for p, rank in zip(procs, ranks):
            code = p.poll()
            if code is None:
                running += 1
            elif code != 0 and failed is None:
                failed = (rank, p, code)
        if failed is not None:
            rank, p, code = failed
            sys.stderr.write(f"loom.distributed.run: rank {rank} (local rank {rank - a.node_rank * a.nproc}, pid "
                             f"{p.pid}) {_describe(code)}; stopping the other ranks\n")
            _stop(procs, a.grace)
            return code if code > 0 else 128 - code
        if running == 0:
            return 0
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main())
