"""Makes `import torch` mean loom, so a PyTorch program runs on loom unchanged.

    python loom_as_torch.py program.py --epochs 1      # run a script with torch = loom
    python -c "import loom_as_torch; loom_as_torch.install(); import torch; ..."

install() imports every module of the loom package and enters each in sys.modules a second time
under the name torch would give it (loom.nn.functional as torch.nn.functional, loom.utils.data as
torch.utils.data, ...), so `import torch.x.y`, `from torch.x import y` and `import torch.x as z`
all find loom's module without the import system looking for files named torch.
"""
import importlib
import pkgutil
import runpy
import sys


def install():
    import loom
    # Modules a package does not import itself (loom.optim.lr_scheduler is imported by
    # loom.optim, but not every leaf is) must be in sys.modules before they are aliased.
    for info in pkgutil.walk_packages(loom.__path__, "loom."):
        importlib.import_module(info.name)
    for name, module in list(sys.modules.items()):
        if name == "loom" or name.startswith("loom."):
            sys.modules["torch" + name[len("loom"):]] = module
    return loom


def main(argv):
    if not argv:
        sys.exit("usage: loom_as_torch.py PROGRAM.py [ARGS...]")
    install()
    sys.argv = list(argv)  # the program sees its own name as argv[0], as when run directly
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
