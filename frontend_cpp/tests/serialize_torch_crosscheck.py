"""loom::save's files load in PyTorch, and loom::load reads torch.save's.

Run by ctest (frontend.serialize.torch_crosscheck) as
    python3 serialize_torch_crosscheck.py <path to loom_serialize_crosscheck>
with Debian's python3-torch. The model is serialize_crosscheck.cpp's
make_model(), built here in PyTorch with the same layer names.
"""
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn


def make_model():
    return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(),
                         nn.Linear(3 * 4 * 4, 5))


def main():
    exe = sys.argv[1]
    errors = []
    with tempfile.TemporaryDirectory() as d:
        # loom writes, PyTorch reads.
        subprocess.run([exe, "write", d], check=True)
        model = make_model()
        state = torch.load(os.path.join(d, "model.pt"))
        if list(state.keys()) != list(model.state_dict().keys()):
            errors.append("model.pt keys {} != PyTorch's {}".format(list(state.keys()),
                                                                  list(model.state_dict().keys())))
        else:
            model.load_state_dict(state)
            model.eval()
            x = torch.load(os.path.join(d, "input.pt"))
            want = torch.load(os.path.join(d, "output.pt"))
            diff = (model(x) - want).abs().max().item()
            if not diff < 1e-5:
                errors.append("the C++ model's output differs in PyTorch by {}".format(diff))
            if state["1.num_batches_tracked"].dtype != torch.int64 or state["1.num_batches_tracked"].item() != 1:
                errors.append("num_batches_tracked: {}".format(state["1.num_batches_tracked"]))
        lst = torch.load(os.path.join(d, "list.pt"))
        if not isinstance(lst, list) or [t.dtype for t in lst] != [torch.int64, torch.float16, torch.float64]:
            errors.append("list.pt: {}".format(lst))
        elif lst[0].tolist() != [3, -4, 5] or lst[1].tolist() != [[1.5, 1.5]] * 2 or \
                not torch.equal(lst[2], torch.eye(3, dtype=torch.float64)):
            errors.append("list.pt values: {}".format(lst))

        # PyTorch writes, loom reads.
        torch.manual_seed(0)
        model = make_model()
        model(torch.randn(8, 2, 4, 4))  # running statistics away from 0 / 1
        model.eval()
        x = torch.randn(3, 2, 4, 4)
        torch.save(model.state_dict(), os.path.join(d, "torch_model.pt"))
        torch.save(x, os.path.join(d, "torch_input.pt"))
        torch.save(model(x).detach(), os.path.join(d, "torch_output.pt"))
        torch.save([torch.tensor([1, 2, 3]), torch.full((2,), 1.0, dtype=torch.bfloat16)],
                   os.path.join(d, "torch_list.pt"))
        if subprocess.run([exe, "check", d]).returncode != 0:
            errors.append("loom::load could not reproduce PyTorch's files (see above)")
    for e in errors:
        print("FAIL:", e)
    print("ok" if not errors else "{} failures".format(len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
