"""Overhead per case of nonsmooth.sweep: serial, the local process pool and a Dask
LocalCluster, for a 1 ms and a 100 ms task (a busy loop, so the task time is CPU time).

    python python/benches/sweep_overhead.py [--workers 2] [--cases 32]

overhead per case = wall time × workers / cases − task time: what a case costs beyond its own
work (pickling, the task round trip, scheduling). Scaling out pays when it is small against
the task time.
"""

import argparse
import time

import nonsmooth as ns


def busy(ms):
    """Spins for `ms` milliseconds of wall time."""
    end = time.perf_counter() + ms / 1000.0
    x = 0.0
    while time.perf_counter() < end:
        x += 1.0
    return x


def measure(executor, cases, workers):
    start = time.perf_counter()
    results = ns.sweep(busy, cases, executor=executor, max_workers=workers, progress=False)
    wall = time.perf_counter() - start
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cases", type=int, default=32)
    args = parser.parse_args()
    rows = []
    for ms in (1.0, 100.0):
        cases = [{"ms": ms}] * args.cases
        runs = [("serial", "serial", 1), ("process pool", None, args.workers)]
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            Client = None
        for name, executor, workers in runs:
            wall = measure(executor, cases, workers)
            rows.append((name, ms, wall, wall * workers / args.cases - ms / 1000.0))
        if Client is not None:
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                   dashboard_address=None)
            with cluster, Client(cluster) as client:
                measure(client.get_executor(), cases[:2], args.workers)  # warm-up
                wall = measure(client.get_executor(), cases, args.workers)
            rows.append(("dask LocalCluster", ms, wall,
                         wall * args.workers / args.cases - ms / 1000.0))
    print(f"{args.cases} cases, {args.workers} workers")
    print(f"{'executor':<20} {'task':>8} {'wall':>9} {'overhead/case':>14}")
    for name, ms, wall, over in rows:
        print(f"{name:<20} {ms:>6.0f} ms {wall:>8.3f} s {over * 1000:>11.2f} ms")


if __name__ == "__main__":
    main()
