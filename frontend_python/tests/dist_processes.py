"""Helpers of the multi-process tests (test_distributed.py, test_ddp.py): a free
port on 127.0.0.1, and running one script as every rank of a world."""
import socket
import subprocess
import sys


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(script, world, args, timeout=180):
    """Runs `python3 script <rank> <world> *args` for every rank; asserts each exits 0
    and prints "ok <rank>"; kills every rank when one outlives the timeout."""
    procs = [subprocess.Popen([sys.executable, str(script), str(r), str(world), *map(str, args)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(world)]
    for r, p in enumerate(procs):
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        assert p.returncode == 0, f"rank {r} failed:\n{err}"
        assert f"ok {r}" in out
