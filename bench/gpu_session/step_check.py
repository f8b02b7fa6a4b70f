"""The transformer encoder step, loom vs torch: sequential (all loom, then all torch) and interleaved."""
import statistics, sys, time
sys.path.insert(0, "bench")  # run from the repository root
import loom, torch
import cuda_bench as cb

fl, ft = cb._encoder_step(loom), cb._encoder_step(torch)
ls, ts = loom.cuda.synchronize, torch.cuda.synchronize
for _ in range(3):
    fl(); ls(); ft(); ts()
for r in range(3):
    tl = statistics.median(cb._batch(fl, ls, 20) for _ in range(7))
    tt = statistics.median(cb._batch(ft, ts, 20) for _ in range(7))
    print(f"sequential  loom {tl*1e3:.3f} ms  torch {tt*1e3:.3f} ms  torch/loom {tt/tl:.2f}x")
    tl, tt = cb.paired(fl, ls, ft, ts, inner=20)
    print(f"interleaved loom {tl*1e3:.3f} ms  torch {tt*1e3:.3f} ms  torch/loom {tt/tl:.2f}x")
# torch alone in a fresh sequence, no loom work between its batches
tt = statistics.median(cb._batch(ft, ts, 20) for _ in range(15))
print(f"torch alone {tt*1e3:.3f} ms")
tl = statistics.median(cb._batch(fl, ls, 20) for _ in range(15))
print(f"loom alone  {tl*1e3:.3f} ms")
