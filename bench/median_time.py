"""The one timing rule of the Python benches: the median of `reps` calls, after warm-up calls."""
import statistics
import time


def median_seconds(fn, reps, warmup=2):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
