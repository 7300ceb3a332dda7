"""Arrays as numpy hands them over: unaligned buffers (what Dask or multiprocessing may
deliver, or an array on a byte buffer at an odd offset) and non-contiguous views are read
correctly, never a panic."""

import numpy as np

import nonsmooth as ns


def _unaligned(values):
    values = np.asarray(values, dtype=np.float64)
    buf = bytearray(values.nbytes + 1)
    a = np.frombuffer(buf, dtype=np.float64, count=values.size, offset=1)
    a[:] = values
    assert not a.flags.aligned
    return a


def test_unaligned_and_strided_arrays_are_read_like_aligned_ones(examples):
    model = ns.load_model(str(examples / "bouncing_sphere.toml"))
    q0 = np.array([0.0, 0.0, 0.7, 1.0, 0.0, 0.0, 0.0])
    plain = ns.simulate(model, stepper="anitescu-potra", dt=1e-3, duration=0.05, q0=q0)
    odd = ns.simulate(model, stepper="anitescu-potra", dt=1e-3, duration=0.05, q0=_unaligned(q0))
    assert np.array_equal(plain["q"], odd["q"])
    strided = np.zeros(14)
    strided[::2] = q0
    view = ns.simulate(model, stepper="anitescu-potra", dt=1e-3, duration=0.05, q0=strided[::2])
    assert np.array_equal(plain["q"], view["q"])
    m = model.mass_matrix(_unaligned(q0))
    assert np.array_equal(m, model.mass_matrix(q0))
    a = _unaligned([[2.0, 1.0], [1.0, 2.0]][0] + [1.0, 2.0]).reshape(2, 2)
    z = ns.lcp(a, _unaligned([-1.0, -1.0]))["z"]
    assert np.allclose(z, [1.0 / 3.0, 1.0 / 3.0])
