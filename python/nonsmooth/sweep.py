"""Parameter sweeps: one function over many parameter sets, on a process pool or any
:class:`concurrent.futures.Executor` (Dask, Ray, …).

::

    import nonsmooth as ns

    model = ns.load_model("examples/bouncing_sphere.toml")
    cases = ns.grid(stepper=["anitescu-potra", "drumwright"], dt=[1e-3, 5e-4])
    results = ns.sweep(ns.simulate, cases, common={"model": model, "duration": 0.5})
    for r in results:
        print(r.params, r.error or r.value["q"][-1])

Each case runs ``fn(**common, **params)`` (plus ``seed=`` when ``fn`` takes one) in a worker
process; the records come back in input order, each with its parameters, its seed, its value
or the error that stopped it (a failing case never loses the sweep), and its wall time. A
sweep whose every case failed raises :class:`SweepError` (its ``results`` hold the records):
then the cause is rarely the cases themselves but the function, the common arguments or the
executor, e.g. a script that starts the default process pool without an
``if __name__ == "__main__":`` guard (each ``spawn`` worker imports the main module again).

Executors: ``executor=None`` (default) uses a local process pool (``spawn`` start method, so
the Rust thread pools of the parent are never forked); ``"serial"`` runs in this process; any
``concurrent.futures.Executor`` scales out, e.g. Dask::

    from dask.distributed import Client, LocalCluster
    with Client(LocalCluster(n_workers=2, threads_per_worker=1)) as client:
        results = ns.sweep(ns.simulate, cases, common={"model": model},
                           executor=client.get_executor())

and Ray through a three-line Executor (an ``ObjectRef``'s ``future()`` is a
``concurrent.futures.Future``)::

    class RayExecutor(concurrent.futures.Executor):
        def submit(self, fn, *args, **kwargs):
            return ray.remote(fn).remote(*args, **kwargs).future()

Determinism: the toolkit's solvers are deterministic for a given input, so a case gives the
same value bit for bit wherever it runs; ``seed`` (``base_seed + index``) is the per-case seed
for functions that draw random numbers, recorded for replay.
"""

from __future__ import annotations

import concurrent.futures as cf
import inspect
import itertools
import multiprocessing
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

__all__ = ["grid", "sweep", "SweepError", "SweepRecord", "SweepResults"]


@dataclass
class SweepRecord:
    """One case of a sweep."""

    index: int
    """Position of the case in the input."""
    params: Dict[str, Any]
    """The case's own parameters (without the common ones)."""
    seed: int
    """The case's seed (``base_seed + index``)."""
    value: Any = None
    """What the function returned; ``None`` when it raised."""
    error: Optional[str] = None
    """``"ExceptionType: message"`` when the function raised, else ``None``."""
    traceback: Optional[str] = None
    """The formatted traceback of that exception."""
    seconds: float = 0.0
    """Wall time of the case in its worker."""

    @property
    def ok(self) -> bool:
        """Whether the case returned a value."""
        return self.error is None


class SweepResults(List[SweepRecord]):
    """The records of a sweep in input order (a list), with a table view."""

    @property
    def failed(self) -> List[SweepRecord]:
        """The cases that raised."""
        return [r for r in self if not r.ok]

    def dataframe(self):
        """A pandas DataFrame: one row per case, its parameters as columns, then ``seed``,
        ``error``, ``seconds`` and ``value`` (requires pandas)."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("SweepResults.dataframe() needs pandas (pip install pandas)") from e
        rows = []
        for r in self:
            row = dict(r.params)
            row.update(seed=r.seed, error=r.error, seconds=r.seconds, value=r.value)
            rows.append(row)
        return pd.DataFrame(rows, index=[r.index for r in self])


class SweepError(RuntimeError):
    """Every case of a sweep failed. ``results`` holds the records (each with its error and
    traceback); the message gives the number of cases and the first error."""

    def __init__(self, message: str, results: SweepResults) -> None:
        super().__init__(message)
        self.results = results


# Why every case on the default pool fails with BrokenProcessPool when a script has no guard:
# each `spawn` worker imports the main module, which starts a pool again while the worker is
# still starting, and the worker dies.
_GUARD_HINT = (
    "the worker processes of the default pool (spawn start method) import the main module; "
    "a script that calls sweep() must call it under `if __name__ == \"__main__\":`"
)


def _all_failed(records: SweepResults, own_pool: bool) -> SweepError:
    first = records[0]
    message = (
        f"all {len(records)} cases of the sweep failed; the first (params {first.params}): "
        f"{first.error}"
    )
    if own_pool and first.error is not None and first.error.startswith("BrokenProcessPool"):
        message += f" ({_GUARD_HINT})"
    return SweepError(message, records)


def grid(**axes: Iterable[Any]) -> List[Dict[str, Any]]:
    """The cartesian product of named axes, the last axis varying fastest:
    ``grid(a=[1, 2], b=["x", "y"])`` → ``[{a: 1, b: "x"}, {a: 1, b: "y"}, {a: 2, b: "x"}, …]``."""
    names = list(axes)
    values = [list(v) for v in axes.values()]
    for name, v in zip(names, values):
        if not v:
            raise ValueError(f"grid axis `{name}` is empty")
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def _takes_seed(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return "seed" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _run_case(
    fn: Callable[..., Any],
    index: int,
    params: Dict[str, Any],
    common: Dict[str, Any],
    seed: int,
    pass_seed: bool,
) -> SweepRecord:
    """Runs one case in a worker and captures its error (module level: it must pickle)."""
    kwargs = dict(common)
    kwargs.update(params)
    if pass_seed:
        kwargs["seed"] = seed
    start = time.perf_counter()
    record = SweepRecord(index=index, params=params, seed=seed)
    try:
        record.value = fn(**kwargs)
    except Exception as e:  # a failing case is recorded, never raised
        record.error = f"{type(e).__name__}: {e}"
        record.traceback = traceback.format_exc()
    record.seconds = time.perf_counter() - start
    return record


def _report(progress: Union[bool, Callable[[int, int, int], None]], done: int, total: int,
            failed: int) -> None:
    if progress is True:
        end = "\n" if done == total else ""
        print(f"\rsweep: {done}/{total} cases ({failed} failed)", end=end, file=sys.stderr,
              flush=True)
    elif callable(progress):
        progress(done, total, failed)


def sweep(
    fn: Callable[..., Any],
    params: Sequence[Mapping[str, Any]],
    executor: Union[None, str, cf.Executor] = None,
    *,
    common: Optional[Mapping[str, Any]] = None,
    base_seed: int = 0,
    max_workers: Optional[int] = None,
    progress: Union[bool, Callable[[int, int, int], None]] = True,
) -> SweepResults:
    """Runs ``fn(**common, **case)`` for every case of ``params`` (a list of dicts, e.g. from
    :func:`grid`) and returns the records in input order.

    ``fn`` and the arguments must pickle for process pools and remote executors (the
    toolkit's functions and models do; a lambda does not — use a module-level function).
    ``executor``: ``None`` for a local process pool of ``max_workers`` processes (default: the
    CPU count), ``"serial"`` to run here, or any ``concurrent.futures.Executor`` (its workers
    must import ``nonsmooth``). ``progress``: ``True`` prints ``done/total`` to stderr, a
    callable receives ``(done, total, failed)``, ``False`` is silent. A case that raises is
    recorded with its error and traceback; the sweep goes on. When every case failed (the
    function, the common arguments or the executor are broken rather than some cases), it
    raises :class:`SweepError`, whose ``results`` hold the records.
    """
    cases = [dict(p) for p in params]
    for i, case in enumerate(cases):
        if not all(isinstance(k, str) for k in case):
            raise TypeError(f"params[{i}]: parameter names must be strings")
    shared = dict(common or {})
    pass_seed = _takes_seed(fn)
    args = [(fn, i, case, shared, base_seed + i, pass_seed) for i, case in enumerate(cases)]
    total = len(args)
    records: List[Optional[SweepRecord]] = [None] * total
    failed = 0
    if executor == "serial":
        for k, a in enumerate(args):
            records[k] = _run_case(*a)
            failed += not records[k].ok
            _report(progress, k + 1, total, failed)
        return _checked(SweepResults(records), own_pool=False)  # type: ignore[arg-type]
    if isinstance(executor, str):
        raise ValueError(f"executor {executor!r}: expected None, 'serial' or an Executor")
    own = executor is None
    pool: cf.Executor = (
        cf.ProcessPoolExecutor(max_workers=max_workers,
                               mp_context=multiprocessing.get_context("spawn"))
        if own else executor
    )
    try:
        futures = {pool.submit(_run_case, *a): a[1] for a in args}
        done = 0
        for future in cf.as_completed(futures):
            index = futures[future]
            try:
                record = future.result()
            except Exception as e:  # the worker itself failed (pickling, a crashed process)
                record = SweepRecord(index=index, params=cases[index], seed=base_seed + index,
                                     error=f"{type(e).__name__}: {e}",
                                     traceback=traceback.format_exc())
            records[index] = record
            done += 1
            failed += not record.ok
            _report(progress, done, total, failed)
    finally:
        if own:
            pool.shutdown()
    return _checked(SweepResults(records), own_pool=own)  # type: ignore[arg-type]


def _checked(records: SweepResults, own_pool: bool) -> SweepResults:
    """The records, or SweepError when there were cases and every one failed."""
    if records and all(not r.ok for r in records):
        raise _all_failed(records, own_pool)
    return records
