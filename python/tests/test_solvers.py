"""Standalone LCP / QP / SOCP solvers against closed-form solutions."""

import numpy as np
import pytest

import nonsmooth as ns

M = np.array([[2.0, 1.0], [1.0, 2.0]])
Q = np.array([-5.0, -6.0])


@pytest.mark.parametrize("method", ["lemke", "pgs", "enumerate"])
def test_lcp_interior_solution(method):
    r = ns.lcp(M, Q, method=method, max_iterations=2000 if method == "pgs" else None,
               tol=1e-12 if method == "pgs" else None)
    # both z > 0, so w = 0: M z = -q gives z = (4/3, 7/3)
    np.testing.assert_allclose(r["z"], [4 / 3, 7 / 3], atol=1e-8)
    np.testing.assert_allclose(r["w"], M @ r["z"] + Q, atol=1e-12)
    assert r["status"] == "solved"
    assert max(r["residuals"].values()) < 1e-8


def test_lcp_enumerate_finds_all_solutions():
    # M = -I style degenerate problem with three solutions: z in {(0,0)... } use M = [[1,2],[2,1]]
    r = ns.lcp(np.array([[1.0, 2.0], [2.0, 1.0]]), np.array([-1.0, -1.0]), method="enumerate")
    sols = sorted(tuple(np.round(z, 9)) for z in r["solutions"])
    assert sols == sorted([(1.0, 0.0), (0.0, 1.0), (round(1 / 3, 9), round(1 / 3, 9))])


def test_lcp_errors_carry_the_rust_message():
    with pytest.raises(ns.SolverError, match=r"M must be square"):
        ns.lcp(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="unknown LCP method"):
        ns.lcp(M, Q, method="simplex")


def test_qp_with_inequality():
    r = ns.qp(np.eye(2), np.array([-1.0, -1.0]), G=np.array([[1.0, 1.0]]), h=np.array([1.0]))
    np.testing.assert_allclose(r["x"], [0.5, 0.5], atol=1e-7)
    np.testing.assert_allclose(r["objective"], 0.25 - 1.0, atol=1e-7)
    np.testing.assert_allclose(r["z"], [0.5], atol=1e-6)  # multiplier of x1 + x2 <= 1


def test_qp_bounds_and_equalities():
    r = ns.qp(np.eye(3), np.zeros(3), A=np.array([[1.0, 1.0, 1.0]]), b=np.array([3.0]),
              lower=np.array([0.0, 0.0, 1.5]), upper=np.array([10.0, 10.0, 10.0]))
    np.testing.assert_allclose(r["x"], [0.75, 0.75, 1.5], atol=1e-6)


def test_qp_infeasible_raises():
    with pytest.raises(ns.SolverError, match="infeasible"):
        ns.qp(np.eye(2), np.zeros(2), G=np.array([[1.0, 0.0], [-1.0, 0.0]]),
              h=np.array([-1.0, -1.0]))
    with pytest.raises(ValueError, match="give both arrays or neither"):
        ns.qp(np.eye(2), np.zeros(2), G=np.eye(2))


def test_socp_unit_ball():
    # min -x1 - x2 s.t. ||x|| <= 1  ->  x = (1, 1)/sqrt 2
    cone = (np.eye(2), np.zeros(2), np.zeros(2), 1.0)
    r = ns.socp(np.zeros((2, 2)), np.array([-1.0, -1.0]), [cone])
    np.testing.assert_allclose(r["x"], [2**-0.5, 2**-0.5], atol=1e-6)
    np.testing.assert_allclose(r["objective"], -(2**0.5), atol=1e-6)
