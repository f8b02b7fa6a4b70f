#!/bin/bash
# The Python frontend on the GPU machine's own Python, numpy (2.x) and PyTorch (2.x), after
# run_checks.sh's set-up: ONLY='bash bench/gpu_session/frontend_check.sh' BUDGET=300 bash
# bench/gpu_session/run_checks.sh. Every step prints its tail; logs under $OUT.
set -u
python3 -c "import numpy, torch, sys; print('python', sys.version.split()[0], 'numpy', numpy.__version__, 'torch', torch.__version__)"
T="timeout -k 5"
# numpy 2.x conversions, both directions, and the rest of the suite on this machine's versions.
$T 240 python3 -m pytest -q -p no:cacheprovider -W error::DeprecationWarning \
  frontend_python/tests/test_array_interface.py frontend_python/tests/test_interop.py 2>&1 | tail -15
# PyTorch 2.x as the oracle for the grad_fn table (also printed whole) and the edge gradients (CPU
# and CUDA).
$T 60 python3 frontend_python/tests/test_grad_fn_names.py 2>&1 | tail -20
$T 200 python3 -m pytest -q -p no:cacheprovider frontend_python/tests/test_loss_edges.py \
  frontend_python/tests/test_random.py frontend_python/tests/test_pytorch_surface.py 2>&1 | tail -25
# Seeding on the GPU: equal seeds give the CPU's numbers; per-GPU state; multinomial / randperm.
$T 60 python3 - <<'PY' 2>&1 | tail -20
import loom
assert loom.cuda.is_available()
loom.manual_seed(3); cpu = loom.rand(1000).tolist()
loom.manual_seed(3); assert loom.rand(1000, device="cuda").cpu().tolist() == cpu, "cuda draws differ from cpu"
loom.cuda.manual_seed(9); a = loom.randn(5, device="cuda").cpu().tolist()
loom.cuda.manual_seed(9); assert loom.randn(5, device="cuda").cpu().tolist() == a
s = loom.cuda.get_rng_state(); b = loom.rand(4, device="cuda").cpu().tolist()
loom.cuda.set_rng_state(s); assert loom.rand(4, device="cuda").cpu().tolist() == b
g = loom.Generator("cuda").manual_seed(1)
p = loom.multinomial(loom.tensor([0.2, 0.0, 0.8], device="cuda"), 4000, True, generator=g)
assert p.device.type == "cuda" and int((p == 1).sum().item()) == 0
print("cuda seeding ok; multinomial share of 2:", float((p == 2).float().mean().item()))
print("randperm cuda:", sorted(loom.randperm(50, device="cuda").cpu().tolist()) == list(range(50)))
x = loom.tensor([40.0, -40.0, 0.5], device="cuda", requires_grad=True)
loom.nn.functional.binary_cross_entropy(x.sigmoid(), loom.tensor([0.0, 1.0, 1.0], device="cuda")).backward()
print("bce grad on cuda at saturation:", x.grad.cpu().tolist())
PY
$T 120 build/bin/loom-conformance --device cuda --grad \
  -o mse_loss,l1_loss,smooth_l1_loss,huber_loss,binary_cross_entropy,binary_cross_entropy_with_logits,multinomial 2>&1 | tail -15
