"""Python-level overhead of loom against PyTorch, side by side in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py

Each figure is the best of several timeit repeats (the machine is shared and
noisy; the minimum is the least disturbed run), for loom and for PyTorch in
the same process. Prints a table with the ratio PyTorch / loom (> 1: loom is
faster). PyTorch is only the peer; without it loom's figures print alone.
"""
import os
import subprocess
import sys
import timeit


def best_ns(stmt, env, number):
    return min(timeit.repeat(stmt, globals=env, number=number, repeat=7)) / number * 1e9


def import_seconds(module):
    """Best of three fresh interpreters after a warm-up one, with bytecode caching on (as an
    installed package has its .pyc files), whatever PYTHONDONTWRITEBYTECODE says here."""
    code = f"import time; t = time.perf_counter(); import {module}; {module}.ones(1); print(time.perf_counter() - t)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    runs = [float(subprocess.check_output([sys.executable, "-c", code], env=env)) for _ in range(4)]
    return min(runs[1:])


def op_cases(lib):
    env = {"lib": lib}
    exec("a = lib.ones(1); b = lib.ones(1)\n"
         "ag = lib.ones(1, requires_grad=True); bg = lib.ones(1, requires_grad=True)\n"
         "m = lib.ones(64, 64); x = lib.ones(32, 64)\n"
         "idx = lib.tensor([3, 1, 7]); mask = x[:, 0] > 0\n", env)
    return env, [
        ("a + b, 1 element", "a + b", 200000),
        ("a + b, 1 element, requires_grad", "ag + bg", 200000),
        ("a.sum(), 1 element", "a.sum()", 100000),
        ("x @ m, 32x64 @ 64x64", "x @ m", 50000),
        ("relu(x), 32x64", "x.relu()", 100000),
        ("x[3], a row view", "x[3]", 200000),
        ("x[1:20:2, 5], slice + int", "x[1:20:2, 5]", 100000),
        ("x[idx], 3 rows by index tensor", "x[idx]", 50000),
        ("x[mask], boolean mask", "x[mask]", 50000),
    ]


def extra_cases(lib):
    """Benchmarks that need more of the library (training step); empty if unavailable."""
    try:
        from bench_training import training_step_case  # noqa: PLC0415
    except ImportError:
        return []
    return [training_step_case(lib)]


def main():
    import loom
    try:
        import torch
        torch.set_num_threads(loom.get_num_threads() if hasattr(loom, "get_num_threads") else torch.get_num_threads())
    except ImportError:
        torch = None
    rows = []
    loom_env, cases = op_cases(loom)
    torch_env = op_cases(torch)[0] if torch else None
    for label, stmt, number in cases:
        lt = best_ns(stmt, loom_env, number)
        tt = best_ns(stmt, torch_env, number) if torch else None
        rows.append((label, lt, tt))
    for label, loom_fn, torch_fn, number in extra_cases(loom):
        lt = best_ns("f()", {"f": loom_fn}, number)
        tt = best_ns("f()", {"f": torch_fn}, number) if torch and torch_fn else None
        rows.append((label, lt, tt))
    li = import_seconds("loom") * 1e9
    ti = import_seconds("torch") * 1e9 if torch else None
    rows.append(("import (+ first tensor)", li, ti))
    print(f"{'benchmark':42} {'loom':>12} {'torch':>12} {'torch/loom':>10}")
    for label, lt, tt in rows:
        def fmt(ns):
            return "-" if ns is None else (f"{ns / 1e6:.1f} ms" if ns >= 1e6 else f"{ns:.0f} ns")
        ratio = f"{tt / lt:.2f}x" if tt else "-"
        print(f"{label:42} {fmt(lt):>12} {fmt(tt):>12} {ratio:>10}")


if __name__ == "__main__":
    main()
