"""samples/python/train_digits_ddp.py: 2 processes x batch 16 (loom.distributed.run, DDP over gloo)
reach the test accuracy of 1 process x batch 32, and the sample runs as one process with or
without the launcher. The runs are deterministic; only float summation order differs between
them (see the sample's docstring), so the accuracies may be a test image or two apart, the
losses a little; measured they are equal."""
import functools
import os
import re
import subprocess
import sys

import pytest
from dist_processes import free_port

import loom.distributed as dist

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(), reason="the gloo plugin is not built")

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "python", "train_digits_ddp.py")
EPOCHS = 20
TEST_ROWS = 359  # digits.load_digits: 20% of 1797


@functools.lru_cache(maxsize=None)  # the one-process reference serves both tests
def train(batch_size, nproc=None):
    """The sample's (per-epoch losses, final accuracy). nproc None: no launcher."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")}
    cmd = [sys.executable]
    if nproc is not None:
        cmd += ["-m", "loom.distributed.run", "--nproc-per-node", str(nproc), "--master-port", str(free_port())]
    cmd += [SAMPLE, "--epochs", str(EPOCHS), "--batch-size", str(batch_size)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}"
    losses = [float(x) for x in re.findall(r"loss (\d+\.\d+)", out.stdout)]
    final = float(re.search(r"final test accuracy (\d+\.\d+)", out.stdout).group(1))
    assert len(losses) == EPOCHS, out.stdout  # rank 0 alone prints
    return losses, final


def test_two_processes_reach_the_accuracy_of_one_with_the_same_global_batch():
    one_losses, one = train(32)
    two_losses, two = train(16, nproc=2)
    assert one >= 0.97  # the sample's own --min-accuracy, which its exit status checks too
    assert abs(one - two) <= 2 / TEST_ROWS + 1e-4, (one, two)
    for epoch, (a, b) in enumerate(zip(one_losses, two_losses)):
        assert abs(a - b) <= 2e-3, (epoch + 1, a, b)


def test_one_process_under_the_launcher_is_ddp_at_world_size_one():
    losses, final = train(32, nproc=1)
    ref_losses, ref = train(32)
    assert abs(final - ref) <= 2 / TEST_ROWS + 1e-4, (final, ref)
    assert max(abs(a - b) for a, b in zip(losses, ref_losses)) <= 2e-3
