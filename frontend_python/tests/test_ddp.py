"""DistributedDataParallel: 2 processes x batch 16 reach the parameters 1 process x batch 32
reaches after 20 SGD steps (float32 tolerance), with and without no_sync gradient
accumulation, with .grad copied out of the buckets or as their views; parameters unused
on some or all ranks (find_unused_parameters); buffers broadcast from rank 0; and what it
refuses."""
import textwrap

import pytest
from dist_processes import free_port, run_ranks

import loom
import loom.distributed as dist

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(), reason="the gloo plugin is not built")

WORKER = textwrap.dedent("""
    import sys
    import numpy as np
    import loom
    import loom.nn as nn
    import loom.distributed as dist
    from loom.nn.parallel import DistributedDataParallel as DDP

    rank, world, port, accumulate = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
    as_view = sys.argv[5] == "1"
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)

    def model():
        loom.manual_seed(rank * 7 + 1)  # different on each rank: DDP must broadcast rank 0's
        return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))

    rng = np.random.default_rng(0)
    X = loom.tensor(rng.standard_normal((20, 32, 8)).astype(np.float32))
    Y = loom.tensor(rng.standard_normal((20, 32, 4)).astype(np.float32))
    loss_fn = nn.MSELoss()

    # Reference: one process, the whole batch of 32 (rank 0's initial weights).
    ref = model() if rank == 0 else None
    if rank == 0:
        ref_opt = loom.optim.SGD(ref.parameters(), lr=0.1)
        for s in range(20):
            ref_opt.zero_grad()
            if accumulate:  # four chunks of 8, summed then halved: what 2 ranks x 2 chunks average to
                loss = sum(loss_fn(ref(X[s, c * 8:(c + 1) * 8]), Y[s, c * 8:(c + 1) * 8]) for c in range(4)) / 2
            else:
                loss = loss_fn(ref(X[s]), Y[s])
            loss.backward()
            ref_opt.step()

    # DDP: each rank its 16 rows.
    net = model()
    if rank == 0:
        for p, q in zip(net.parameters(), model().parameters()):
            assert np.array_equal(p.detach().numpy(), q.detach().numpy())
    ddp = DDP(net, bucket_cap_mb=0.0002, gradient_as_bucket_view=as_view)  # small buckets: several all-reduces
    opt = loom.optim.SGD(ddp.parameters(), lr=0.1)
    for s in range(20):
        opt.zero_grad(set_to_none=s % 2 == 0)  # .grad None, and .grad zeroed in place (the bucket's view)
        rows = slice(rank * 16, (rank + 1) * 16)
        if accumulate:
            with ddp.no_sync():
                loss_fn(ddp(X[s, rows][:8]), Y[s, rows][:8]).backward()
            loss_fn(ddp(X[s, rows][8:]), Y[s, rows][8:]).backward()
        else:
            loss_fn(ddp(X[s, rows]), Y[s, rows]).backward()
        if as_view:  # .grad is the bucket's memory itself
            flats = [f.numpy() for f in ddp._reducer.bucket_tensors()]
            assert all(any(np.shares_memory(p.grad.numpy(), f) for f in flats) for p in net.parameters())
        opt.step()

    if rank == 0:
        for (name, p), q in zip(net.named_parameters(), ref.parameters()):
            a, b = p.detach().numpy(), q.detach().numpy()
            assert np.allclose(a, b, rtol=1e-5, atol=1e-6), (name, float(np.abs(a - b).max()))
    # Every rank holds the same parameters.
    for p in net.parameters():
        mine = p.detach().clone()
        dist.broadcast(mine, 0)
        assert np.array_equal(mine.numpy(), p.detach().numpy())
    dist.destroy_process_group()
    print("ok", rank)
""")


UNUSED_WORKER = textwrap.dedent("""
    import sys
    import numpy as np
    import loom
    import loom.nn as nn
    import loom.distributed as dist
    from loom.nn.parallel import DistributedDataParallel as DDP

    rank, world, port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)

    class Net(nn.Module):
        # `a` every step; `b` on rank 0 only; `never` on no rank; a BatchNorm's buffers.
        def __init__(self):
            super().__init__()
            self.a, self.b, self.never = nn.Linear(3, 2), nn.Linear(3, 2), nn.Linear(3, 2)
            self.norm = nn.BatchNorm1d(3)

        def forward(self, x, use_b):
            x = self.norm(x)
            return self.a(x) + self.b(x) if use_b else self.a(x)

    loom.manual_seed(rank + 1)  # different on each rank: DDP broadcasts rank 0's
    net = Net()
    with loom.no_grad():
        net.norm.running_mean.fill_(rank + 5.0)
        net.norm.num_batches_tracked.fill_(rank + 7)
    ddp = DDP(net, find_unused_parameters=True, bucket_cap_mb=0.00001)
    assert net.norm.running_mean.tolist() == [5.0] * 3 and net.norm.num_batches_tracked.item() == 7
    x = loom.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) * (rank + 1))
    ddp(x, use_b=rank == 0).sum().backward()
    # Every rank: rank 0's starting statistics, moved by its own batch.
    expect = 0.9 * 5.0 + 0.1 * x.numpy().mean(0)
    assert np.allclose(net.norm.running_mean.numpy(), expect), net.norm.running_mean.tolist()
    assert net.norm.num_batches_tracked.item() == 8

    def both(t):  # [rank 0's, rank 1's]
        got = [loom.zeros_like(t) for _ in range(world)]
        dist.all_gather(got, t.contiguous())
        return [g.numpy() for g in got]

    # No rank used `never`: its .grad stays None (so optimizers skip it), as PyTorch's.
    for p in net.never.parameters():
        assert p.grad is None
    # `b`: rank 0's gradient and rank 1's zeros, averaged; `a`: the average.
    mine = {n: p.grad.clone() for n, p in net.named_parameters() if not n.startswith("never")}
    for n, g in mine.items():
        g0, g1 = both(g)
        assert np.array_equal(g0, g1), n  # the same on every rank
    # The reference: each rank's own gradient, without DDP, from the same weights.
    net2 = Net()
    net2.load_state_dict(net.state_dict())
    with loom.no_grad():
        net2.norm.running_mean.fill_(5.0)
    net2(x, use_b=rank == 0).sum().backward()
    for n, p in net2.named_parameters():
        if n.startswith("never"):
            continue
        local = p.grad if p.grad is not None else loom.zeros_like(p)
        g0, g1 = both(local)
        assert np.allclose(mine[n].numpy(), (g0 + g1) / 2, rtol=1e-5, atol=1e-6), n

    # Without find_unused_parameters a parameter without gradient is an error naming it.
    strict = DDP(Net())
    try:
        strict(x, use_b=True).sum().backward()
        raise SystemExit("expected an error")
    except Exception as e:
        assert "never.weight" in str(e) and "find_unused_parameters" in str(e), str(e)
    dist.destroy_process_group()
    print("ok", rank)
""")


@pytest.mark.parametrize("as_view", [False, True], ids=["grad_copied", "gradient_as_bucket_view"])
@pytest.mark.parametrize("accumulate", [False, True], ids=["sync", "no_sync"])
def test_ddp_two_ranks_match_one_process_with_the_global_batch(tmp_path, accumulate, as_view):
    script = tmp_path / "ddp.py"
    script.write_text(WORKER)
    run_ranks(script, 2, [free_port(), "1" if accumulate else "0", "1" if as_view else "0"])


def test_ddp_unused_parameters_and_buffers(tmp_path):
    script = tmp_path / "unused.py"
    script.write_text(UNUSED_WORKER)
    run_ranks(script, 2, [free_port()])


def test_ddp_needs_a_process_group():
    with pytest.raises(RuntimeError, match="init_process_group"):
        loom.nn.parallel.DistributedDataParallel(loom.nn.Linear(2, 2))


def test_queue_callback_runs_after_backward():
    x = loom.ones(3, requires_grad=True)
    seen = []

    def hook(g):
        loom._C._queue_callback(lambda: seen.append(x.grad.tolist()))
        return g
    x.register_hook(hook)
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0, 2.0]]  # the callback saw the accumulated gradient
    with pytest.raises(Exception, match="no backward pass"):
        loom._C._queue_callback(lambda: None)


def test_distributed_sampler_splits_every_epoch_the_same_way_on_every_rank():
    from loom.utils.data import DistributedSampler
    data = list(range(10))
    for shuffle in (False, True):
        for drop_last in (False, True):
            shares = [list(DistributedSampler(data, num_replicas=3, rank=r, shuffle=shuffle, seed=5,
                                              drop_last=drop_last)) for r in range(3)]
            sizes = {len(s) for s in shares}
            assert sizes == ({3} if drop_last else {4})
            flat = sorted(i for s in shares for i in s)
            if drop_last:
                assert len(set(flat)) == 9
            else:
                assert set(flat) == set(data) and len(flat) == 12  # two repeated to divide evenly
            if not shuffle and not drop_last:
                assert shares[0] == [0, 3, 6, 9] and shares[1] == [1, 4, 7, 0]
    s = DistributedSampler(data, num_replicas=2, rank=0, seed=1)
    first = list(s)
    s.set_epoch(1)
    assert list(s) != first  # a new order each epoch, from seed + epoch
    other = DistributedSampler(data, num_replicas=2, rank=1, seed=1)
    other.set_epoch(1)
    assert sorted(list(s) + list(other)) == data  # the two ranks' shares of epoch 1 cover the data once
    with pytest.raises(ValueError, match="rank 2"):
        DistributedSampler(data, num_replicas=2, rank=2)
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedSampler(data)
