"""nonsmooth.sweep: input order, captured errors, seeds, and the same values bit for bit in
this process, on the local process pool and on a 2-worker Dask cluster."""

import concurrent.futures as cf
import pickle
import subprocess
import sys

import numpy as np
import pytest

import nonsmooth as ns


def _model(root):
    return ns.load_model(str(root / "examples" / "bouncing_sphere.toml"))


def _cases():
    # 16 cases: two steppers × four step sizes × two drop heights (as initial q).
    return [
        {"stepper": s, "dt": dt, "q0": np.array([0.0, 0.0, z, 1.0, 0.0, 0.0, 0.0])}
        for s in ("anitescu-potra", "penalty-symplectic")
        for dt in (1e-3, 2e-3, 2.5e-3, 5e-3)
        for z in (0.5, 1.0)
    ]


def _same(a, b):
    assert [r.index for r in a] == [r.index for r in b]
    for ra, rb in zip(a, b):
        assert ra.ok and rb.ok, (ra.error, rb.error)
        for key in ("t", "q", "v"):
            assert np.array_equal(ra.value[key], rb.value[key]), (ra.params, key)


def test_grid_is_the_cartesian_product_last_axis_fastest():
    assert ns.grid(a=[1, 2], b="xy") == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
    ]
    with pytest.raises(ValueError, match="axis `b` is empty"):
        ns.grid(a=[1], b=[])


def test_errors_are_captured_per_case_and_seeds_follow_the_index(root):
    model = _model(root)
    cases = [{"dt": 1e-3}, {"dt": -1.0}, {"dt": 2e-3}]
    results = ns.sweep(
        ns.simulate,
        cases,
        executor="serial",
        common={"model": model, "duration": 0.05},
        base_seed=100,
        progress=False,
    )
    assert [r.seed for r in results] == [100, 101, 102]
    assert [r.ok for r in results] == [True, False, True]
    assert results.failed[0].params == {"dt": -1.0}
    assert "Error" in results[1].error and "dt" in results[1].error
    assert results[1].traceback


def test_a_sweep_whose_every_case_fails_raises_with_the_records(root):
    model = _model(root)
    with pytest.raises(ns.SweepError, match=r"all 2 cases of the sweep failed.*dt") as caught:
        ns.sweep(ns.simulate, ns.grid(dt=[-1.0, -2.0]), executor="serial",
                 common={"model": model, "duration": 0.05}, progress=False)
    records = caught.value.results
    assert [r.params for r in records] == [{"dt": -1.0}, {"dt": -2.0}]
    assert all(not r.ok and r.traceback for r in records)


def test_a_script_without_the_main_guard_fails_and_says_why(root, tmp_path):
    # The default pool's spawn workers import the script again; without
    # `if __name__ == "__main__":` none starts, and the script must not exit 0.
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import nonsmooth as ns\n"
        f"ball = ns.load_model({str(root / 'examples' / 'bouncing_sphere.toml')!r})\n"
        "ns.sweep(ns.simulate, ns.grid(dt=[1e-3, 2e-3]),\n"
        "         common={'model': ball, 'duration': 0.05}, max_workers=2, progress=False)\n"
        "print('finished')\n"
    )
    proc = subprocess.run([sys.executable, script.name], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode != 0, proc.stdout
    assert "finished" not in proc.stdout
    assert "SweepError: all 2 cases of the sweep failed" in proc.stderr, proc.stderr[-2000:]
    assert 'if __name__ == "__main__":' in proc.stderr


def _draw(seed, scale):
    """A function that takes the case's seed (module level, so that it pickles)."""
    return float(np.random.default_rng(seed).normal() * scale)


def test_a_function_taking_a_seed_receives_the_cases_seed():
    results = ns.sweep(_draw, ns.grid(scale=[1.0, 2.0]), executor="serial", progress=False)
    assert results[0].value == _draw(0, 1.0)
    assert results[1].value == _draw(1, 2.0)


def test_the_process_pool_gives_the_serial_values_bit_for_bit(root):
    model = _model(root)
    common = {"model": model, "duration": 0.3}
    cases = _cases()[:6]
    serial = ns.sweep(ns.simulate, cases, executor="serial", common=common, progress=False)
    pooled = ns.sweep(ns.simulate, cases, common=common, max_workers=2, progress=False)
    _same(serial, pooled)
    # The records themselves pickle (to store or send a sweep's results).
    again = pickle.loads(pickle.dumps(pooled))
    _same(serial, again)


def test_a_dask_cluster_of_two_workers_gives_the_serial_values_bit_for_bit(root):
    import dask.distributed as distributed  # installed by scripts/python.sh

    model = _model(root)
    common = {"model": model, "duration": 0.3}
    cases = _cases()
    assert len(cases) == 16
    serial = ns.sweep(ns.simulate, cases, executor="serial", common=common, progress=False)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as client:
        executor = client.get_executor()
        assert isinstance(executor, cf.Executor)
        remote = ns.sweep(ns.simulate, cases, executor=executor, common=common, progress=False)
    _same(serial, remote)


def test_the_dataframe_view_has_one_row_per_case(root):
    import pandas as pd  # installed by scripts/python.sh

    results = ns.sweep(
        ns.simulate,
        ns.grid(dt=[1e-3, 2e-3]),
        executor="serial",
        common={"model": _model(root), "duration": 0.05},
        progress=False,
    )
    frame = results.dataframe()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame["dt"]) == [1e-3, 2e-3]
    assert set(["seed", "error", "seconds", "value"]) <= set(frame.columns)


def _impact(model, seed_offset):
    """A rayon-parallel computation (the impact set's samples), module level so it pickles."""
    return ns.impact_set(model, samples=64, seed=1 + seed_offset)["outcomes"]


def test_the_rayon_thread_count_does_not_change_the_values(root, monkeypatch):
    block = ns.load_model(str(root / "examples" / "impact_rocking_block.toml"))
    cases = ns.grid(seed_offset=[0, 1, 2, 3])
    common = {"model": block}
    serial = ns.sweep(_impact, cases, executor="serial", common=common, progress=False)
    runs = []
    for threads in ("1", "2"):
        # Spawned workers read the variable when their thread pool starts.
        monkeypatch.setenv("RAYON_NUM_THREADS", threads)
        runs.append(ns.sweep(_impact, cases, common=common, max_workers=2, progress=False))
    for run in runs:
        for a, b in zip(serial, run):
            assert a.ok and b.ok, (a.error, b.error)
            assert np.array_equal(a.value, b.value)
