"""loom.distributed from Python: worlds of 1-3 processes on 127.0.0.1 (subprocesses
running the same script as PyTorch programs do), each checking its results against a
reference computed locally; errors name what is wrong."""
import os
import subprocess
import sys
import textwrap

import pytest
from dist_processes import free_port, run_ranks

import loom
import loom.distributed as dist

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(), reason="the gloo plugin is not built")

WORKER = textwrap.dedent("""
    import sys
    import loom
    import loom.distributed as dist

    rank, world, port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    assert dist.is_initialized() and dist.get_rank() == rank and dist.get_world_size() == world
    assert dist.get_backend() == "gloo"

    t = loom.arange(6, dtype=loom.float32) * (rank + 1)
    dist.all_reduce(t)
    assert t.tolist() == [float(i * world * (world + 1) // 2) for i in range(6)], t.tolist()

    t = loom.full((4,), float(rank))
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    assert t.tolist() == [float(world - 1)] * 4

    t = loom.full((3,), float(rank + 1))
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert t.tolist() == [(world + 1) / 2] * 3, t.tolist()

    b = loom.full((2, 2), float(rank), dtype=loom.int64)
    dist.broadcast(b, src=world - 1)
    assert b.tolist() == [[world - 1] * 2] * 2

    out = [loom.zeros(2) for _ in range(world)]
    dist.all_gather(out, loom.full((2,), float(rank)))
    assert [o.tolist() for o in out] == [[float(r)] * 2 for r in range(world)]

    big = loom.zeros(world * 2)
    dist.all_gather_into_tensor(big, loom.full((2,), float(rank)))
    assert big.tolist() == sum([[float(r)] * 2 for r in range(world)], [])

    rs = loom.zeros(2)
    dist.reduce_scatter_tensor(rs, loom.arange(world * 2, dtype=loom.float32))
    assert rs.tolist() == [float(world * (2 * rank)), float(world * (2 * rank + 1))]

    # Uneven all_to_all: rank r sends j + 1 rows of [r, j] to rank j.
    inp = loom.cat([loom.tensor([[float(rank), float(j)]] * (j + 1)) for j in range(world)])
    out = loom.zeros(world * (rank + 1), 2)
    dist.all_to_all_single(out, inp, output_split_sizes=[rank + 1] * world,
                           input_split_sizes=[j + 1 for j in range(world)])
    assert out.tolist() == sum([[[float(r), float(rank)]] * (rank + 1) for r in range(world)], []), out.tolist()
    try:
        dist.all_to_all_single(loom.zeros(world), loom.zeros(3), output_split_sizes=[1] * world,
                               input_split_sizes=[3] + [0] * world)
        raise AssertionError("split sizes that do not match the ranks must be refused")
    except Exception as e:
        assert f"input_split_sizes must hold {world} sizes adding up to input's dim 0 (3)" in str(e), str(e)
    eq = loom.zeros(world, 3)
    dist.all_to_all_single(eq, loom.full((world, 3), float(rank)), async_op=True).wait()
    assert eq.tolist() == [[float(r)] * 3 for r in range(world)]

    # Object collectives: any picklable object, of a different size on each rank.
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank, "pad": "x" * rank * 100})
    assert objs == [{"rank": r, "pad": "x" * r * 100} for r in range(world)], objs
    lst = [("from", 0), [1, 2, 3]] if rank == 0 else [None, None]
    dist.broadcast_object_list(lst, src=0)
    assert lst == [("from", 0), [1, 2, 3]], lst
    got = [None] * world if rank == world - 1 else None
    dist.gather_object(rank * 10, got, dst=world - 1)
    if rank == world - 1:
        assert got == [r * 10 for r in range(world)], got
    mine = [None]
    dist.scatter_object_list(mine, [f"for {r}" for r in range(world)] if rank == 0 else None, src=0)
    assert mine == [f"for {rank}"], mine

    w = dist.all_reduce(loom.ones(8), async_op=True)
    w.wait()
    assert w.is_completed()

    if world > 1:
        if rank == 0:
            dist.send(loom.arange(5, dtype=loom.float32), dst=1)
        elif rank == 1:
            r = loom.zeros(5)
            dist.recv(r, src=0)
            assert r.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]

    # sim has no communication plugin: its tensors go through host copies over gloo, counted.
    s = loom.full((3,), float(rank + 1), device="sim")
    dist.all_reduce(s, op=dist.ReduceOp.AVG)
    assert s.device.type == "sim" and s.cpu().tolist() == [(world + 1) / 2] * 3, s
    dist.broadcast(s, src=0)
    assert dist.host_copy_stats()[("all_reduce", "sim")] == 1
    assert dist.host_copy_stats()[("broadcast", "sim")] == 1
    ones = loom.ones(3, device="sim")
    loom.set_fallback_policy("error")
    try:
        dist.all_reduce(ones)
        raise AssertionError("LOOM_FALLBACK=error must refuse host copies")
    except Exception as e:
        assert "'sim' device, which has no communication plugin of its own" in str(e), str(e)
        assert "LOOM_FALLBACK=error forbids communicating it through host copies over 'gloo'" in str(e), str(e)
    loom.set_fallback_policy("allow")

    dist.barrier()
    dist.destroy_process_group()
    print("ok", rank)
""")


@pytest.mark.parametrize("world", [1, 2, 3])
def test_collectives_across_processes(tmp_path, world):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    run_ranks(script, world, [free_port()], timeout=120)


def test_a_missing_peer_times_out_naming_the_store():
    port = free_port()
    with pytest.raises(Exception, match=f"127.0.0.1:{port}"):
        import datetime
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=2,
                                timeout=datetime.timedelta(seconds=1))
    assert not dist.is_initialized()


LAUNCHED = textwrap.dedent("""
    import os, sys, time
    import loom
    import loom.distributed as dist

    mode = sys.argv[1]
    rank = int(os.environ["RANK"])
    if mode == "fail" and rank == 1:
        sys.exit(3)
    if mode == "fail":
        time.sleep(120)  # must be stopped by the launcher long before this
    dist.init_process_group("gloo")  # env://, from the launcher
    t = loom.full((2,), float(rank))
    dist.all_reduce(t)
    w = int(os.environ["WORLD_SIZE"])
    assert t.tolist() == [float(w * (w - 1) // 2)] * 2
    assert os.environ["LOCAL_RANK"] == str(rank)
    dist.destroy_process_group()
""")


def _launch(tmp_path, mode, nproc, timeout=120):
    script = tmp_path / "launched.py"
    script.write_text(LAUNCHED)
    cmd = [sys.executable, "-m", "loom.distributed.run", "--nproc-per-node", str(nproc), "--master-port",
           str(free_port()), "--grace", "2", str(script), mode]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=dict(os.environ))


def test_the_launcher_runs_a_world_with_env_init(tmp_path):
    r = _launch(tmp_path, "ok", 3)
    assert r.returncode == 0, r.stderr


def test_the_launcher_stops_every_rank_when_one_fails_and_names_it(tmp_path):
    import time
    t0 = time.monotonic()
    r = _launch(tmp_path, "fail", 3)
    assert r.returncode != 0
    assert "rank 1" in r.stderr and "exited with status 3" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 60
    # No orphan: nothing still runs the script.
    out = subprocess.run(["pgrep", "-f", str(tmp_path / "launched.py")], capture_output=True, text=True)
    assert out.stdout.strip() == "", out.stdout
