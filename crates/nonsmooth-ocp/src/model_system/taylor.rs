//! Exact first and second derivatives of a [`ModelSystem`]'s functions at a fraction of the
//! cost of running the rigid-body algorithms on the NLP's large dual numbers.
//!
//! The NLP differentiates its blocks with dual numbers over up to 16 block variables
//! (second-order vector duals for the Hessian, [`crate::nlp`]); run on those, CRBA, RNEA and
//! the kinematics cost hundreds of times their `f64` price. But the model's functions depend
//! only on the shape coordinates z = q_s (gap and path points at zero translation, normal,
//! tangent, M⁻¹) or z = (q_s, v_s) (the bias force −h), where q_s leaves out the translation
//! coordinates (`translation_coordinates` in the parent module: the gap and the points are
//! affine in those with constant slopes, added in the NLP's scalars, and M, h, the Jacobians
//! do not depend on them), and the free acceleration is M⁻¹ (Pᵀu + f_passive − h) with the
//! linear passive force in the NLP's scalars. So each group of functions is evaluated once
//! at the real point with second-order duals over z alone — value F₀, gradient g and
//! Hessian H — and composed with the NLP's scalars by the second-order Taylor polynomial
//!
//! ```text
//! F(z) = F₀ + Σᵢ gᵢ δᵢ + ½ Σᵢⱼ Hᵢⱼ δᵢ δⱼ,   δᵢ = zᵢ − re(zᵢ),
//! ```
//!
//! which has the same value, first and second derivatives as F at the point (the chain
//! rule; the δᵢ vanish there), for every scalar the NLP uses (`f64`, dual, hyper-dual,
//! second-order vector duals). The Jacobian pass evaluates a block once per variable at the
//! same real point, so the inner evaluation is cached per thread by the real values of z.

use super::ModelSystem;
use crate::nlp::Real;
use nalgebra::SMatrix;
use num_dual::{Derivative, Dual2SVec64, Dual64};
use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Largest number of inner variables (2 n_s for the bias force, n_s shape coordinates) handled
/// by the composition; larger models are evaluated directly.
pub(super) const MAX_INNER: usize = 24;
/// Cached inner evaluations per thread (the cache is emptied when full): enough for every
/// stage point of a large FESD discretization, so that the Jacobian and Hessian passes at an
/// iterate reuse the evaluations of its constraint pass.
const CACHE_LEN: usize = 8192;

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

/// A new identity for a system's functions.
pub(super) fn fresh_id() -> usize {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Value, gradient and packed lower-triangle Hessian (diagonal halved) of one function of m
/// inner variables.
struct Taylor {
    value: f64,
    grad: Vec<f64>,
    /// `hess[i(i+1)/2 + j]` for j ≤ i: Hᵢⱼ (i > j) or ½Hᵢᵢ.
    hess: Vec<f64>,
}

/// Which group of functions.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Group {
    QTerms,
    Forces,
}

/// (system identity, group, bits of the real point).
type Key = (usize, Group, Vec<u64>);

thread_local! {
    static CACHE: RefCell<HashMap<Key, Rc<Vec<Taylor>>>> = RefCell::new(HashMap::new());
}

/// The functions of `group` at the real point `z0` with their derivatives (cached).
fn inner(sys: &ModelSystem, group: Group, z0: &[f64]) -> Option<Rc<Vec<Taylor>>> {
    let key: Key = (sys.id, group, z0.iter().map(|x| x.to_bits()).collect());
    let hit = CACHE.with(|c| c.borrow().get(&key).cloned());
    if hit.is_some() {
        return hit;
    }
    let terms = Rc::new(match z0.len() {
        0..=2 => evaluate::<2>(sys, group, z0),
        3..=4 => evaluate::<4>(sys, group, z0),
        5..=8 => evaluate::<8>(sys, group, z0),
        9..=12 => evaluate::<12>(sys, group, z0),
        13..=16 => evaluate::<16>(sys, group, z0),
        17..=MAX_INNER => evaluate::<MAX_INNER>(sys, group, z0),
        _ => return None,
    });
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE_LEN {
            c.clear();
        }
        c.insert(key, terms.clone());
    });
    Some(terms)
}

/// One evaluation with second-order duals over the first `z0.len()` of N variables.
fn evaluate<const N: usize>(sys: &ModelSystem, group: Group, z0: &[f64]) -> Vec<Taylor> {
    let m = z0.len();
    let z: Vec<Dual2SVec64<N>> = z0
        .iter()
        .enumerate()
        .map(|(i, &x)| Dual2SVec64::<N>::from(x).derivative(i))
        .collect();
    let out = match group {
        Group::QTerms => sys.q_terms(&z),
        Group::Forces => sys.bias_terms(&z),
    };
    out.iter()
        .map(|o| {
            let grad = match &o.v1.0 {
                Some(g) => (0..m).map(|i| g[(0, i)]).collect(),
                None => vec![0.0; m],
            };
            let mut hess = vec![0.0; m * (m + 1) / 2];
            if let Some(h) = &o.v2.0 {
                for i in 0..m {
                    for j in 0..=i {
                        hess[i * (i + 1) / 2 + j] =
                            if i == j { 0.5 * h[(i, i)] } else { h[(i, j)] };
                    }
                }
            }
            Taylor {
                value: o.re,
                grad,
                hess,
            }
        })
        .collect()
}

/// The functions of `group` at the NLP's scalars `z` by the Taylor composition; `None` for
/// plain `f64` values and when the model has more than [`MAX_INNER`] inner variables.
fn compose<T: Real>(
    sys: &ModelSystem,
    group: Group,
    z: &[T],
    outputs: Range<usize>,
) -> Option<Vec<T>> {
    // plain values need no derivatives: the direct f64 evaluation is the cheapest
    if z.len() > MAX_INNER || is::<T, f64>() {
        return None;
    }
    let z0: Vec<f64> = z.iter().map(|x| x.re()).collect();
    let terms = inner(sys, group, &z0)?;
    let terms = &terms[outputs];
    // the Hessian pass's second-order vector duals: the chain rule on their parts
    if let Some(out) = chain_rule::<T, 4>(terms, z)
        .or_else(|| chain_rule::<T, 8>(terms, z))
        .or_else(|| chain_rule::<T, 16>(terms, z))
    {
        return Some(out);
    }
    let m = z.len();
    let d: Vec<T> = z.iter().zip(&z0).map(|(x, x0)| *x - T::from(*x0)).collect();
    // δᵢδⱼ once for all functions; they vanish for first-order duals (the Jacobian pass),
    // which then skip the second-order terms
    let first_order = is::<T, Dual64>();
    let mut products = Vec::with_capacity(if first_order { 0 } else { m * (m + 1) / 2 });
    if !first_order {
        for i in 0..m {
            for j in 0..=i {
                products.push(d[i] * d[j]);
            }
        }
    }
    Some(
        terms
            .iter()
            .map(|t| {
                let mut acc = T::from(t.value);
                for (di, &g) in d.iter().zip(&t.grad) {
                    if g != 0.0 {
                        acc += *di * g;
                    }
                }
                for (p, &h) in products.iter().zip(&t.hess) {
                    if h != 0.0 {
                        acc += *p * h;
                    }
                }
                acc
            })
            .collect(),
    )
}

/// Whether `T` is `U`: the size, a constant, decides most cases without the run-time
/// comparison of type identities (which showed in profiles of the composition).
fn is<T: 'static, U: 'static>() -> bool {
    std::mem::size_of::<T>() == std::mem::size_of::<U>() && TypeId::of::<T>() == TypeId::of::<U>()
}

/// The composition for second-order vector duals `T = Dual2SVec64<N>` (`None` for any
/// other scalar) by the chain rule on the parts of z: value F₀, gradient Σᵢ gᵢ Jᵢ and
/// Hessian Σᵢ gᵢ Kᵢ + Jᵀ H J, with Jᵢ and Kᵢ the first- and second-order parts of zᵢ —
/// the numbers the Taylor polynomial gives in the dual arithmetic, without its products of
/// N×N duals (the parts of the NLP's variables are sparse: unit seeds, no second order).
fn chain_rule<T: Real, const N: usize>(terms: &[Taylor], z: &[T]) -> Option<Vec<T>> {
    if !is::<T, Dual2SVec64<N>>() {
        return None;
    }
    let z: Box<dyn Any> = Box::new(z.to_vec());
    let z = *z.downcast::<Vec<Dual2SVec64<N>>>().ok()?;
    let jac: Vec<Vec<(usize, f64)>> = z
        .iter()
        .map(|x| match &x.v1.0 {
            Some(row) => (0..N)
                .filter(|&a| row[(0, a)] != 0.0)
                .map(|a| (a, row[(0, a)]))
                .collect(),
            None => Vec::new(),
        })
        .collect();
    let out: Vec<Dual2SVec64<N>> = terms
        .iter()
        .map(|t| {
            let mut grad = SMatrix::<f64, 1, N>::zeros();
            let mut hess = SMatrix::<f64, N, N>::zeros();
            for (i, &g) in t.grad.iter().enumerate().filter(|(_, g)| **g != 0.0) {
                for &(a, e) in &jac[i] {
                    grad[(0, a)] += g * e;
                }
                if let Some(k) = &z[i].v2.0 {
                    hess += k * g;
                }
            }
            // Jᵀ H J from the packed lower triangle (diagonal halved)
            for i in 0..z.len() {
                for j in 0..=i {
                    let h = t.hess[i * (i + 1) / 2 + j];
                    if h == 0.0 {
                        continue;
                    }
                    let h = if i == j { 2.0 * h } else { h };
                    for &(a, ea) in &jac[i] {
                        for &(b, eb) in &jac[j] {
                            let v = h * ea * eb;
                            hess[(a, b)] += v;
                            if i != j {
                                hess[(b, a)] += v;
                            }
                        }
                    }
                }
            }
            Dual2SVec64::new(t.value, Derivative::some(grad), Derivative::some(hess))
        })
        .collect();
    let out: Box<dyn Any> = Box::new(out);
    out.downcast::<Vec<T>>().ok().map(|b| *b)
}

/// The entries `outputs` of [`ModelSystem::q_terms`] at the shape coordinates z by the
/// composition (`None`: evaluate directly).
pub(super) fn q_terms<T: Real>(
    sys: &ModelSystem,
    z: &[T],
    outputs: Range<usize>,
) -> Option<Vec<T>> {
    compose(sys, Group::QTerms, z, outputs)
}

/// [`ModelSystem::bias_terms`] at z = (q_s, v_s) by the composition (`None`: evaluate
/// directly).
pub(super) fn bias_terms<T: Real>(sys: &ModelSystem, z: &[T]) -> Option<Vec<T>> {
    compose(sys, Group::Forces, z, 0..sys.model().nq())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_system::ModelSystem;
    use nonsmooth_core::Model;

    /// The composed functions carry the same value, gradient and Hessian as the rigid-body
    /// algorithms run directly on the second-order duals at the full coordinates (the
    /// hopper: 4 coordinates of which 2 are translations, 2 controls; a point where every
    /// term is nonlinear, and a path with a hole and a point bound).
    #[test]
    fn composition_has_the_direct_derivatives() {
        use crate::model_system::{EllipseObstacle, PathTerm, PointBound};
        use nalgebra::{DVector, Vector3};
        use nonsmooth_core::dynamics::{kinematics, mass_matrix, point_jacobian, point_position};
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/hopper.toml");
        let model = Model::from_file(path).unwrap();
        let shank = model.body_index("shank").unwrap();
        let foot = Vector3::new(0.0, -0.2, 0.0);
        let sys = ModelSystem::new(model.clone(), None, &["hip".into(), "knee".into()])
            .unwrap()
            .with_path(vec![
                PathTerm::OutsideEllipse(EllipseObstacle {
                    body: shank,
                    point: foot,
                    center: [0.5, 0.0],
                    axes: [0.25, 0.1],
                }),
                PathTerm::Point(PointBound {
                    body: shank,
                    point: foot,
                    axis: 1,
                    bounds: (0.0, 1.0),
                }),
            ])
            .unwrap();
        assert_eq!(sys.shape_coords.len(), 2, "base x and z are translations");
        let z0 = [0.3, 0.45, 0.4, -0.7, 0.5, -0.2, 1.5, -2.0, 12.0, -7.0];
        // the NLP's Hessian-pass scalars (16 seeds), each variable with a second-order part
        // as well, so that both parts of the chain rule are exercised
        type D = Dual2SVec64<16>;
        let seeds: Vec<D> = z0
            .iter()
            .enumerate()
            .map(|(i, &x)| D::from(x).derivative(i + 3) * (1.0 + 0.1 * i as f64))
            .collect();
        let z: Vec<D> = (0..10)
            .map(|i| {
                let j = (i + 1) % 10;
                seeds[i] + (seeds[i] - z0[i]) * (seeds[j] - z0[j]) * 0.05
            })
            .collect();
        let compare = |a: &[D], b: &[D]| {
            assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(b) {
                let scale = 1.0 + y.re.abs();
                assert!((x.re - y.re).abs() < 1e-12 * scale);
                let (g1, g2) = (x.v1.0.unwrap_or_default(), y.v1.0.unwrap_or_default());
                let (h1, h2) = (x.v2.0.unwrap_or_default(), y.v2.0.unwrap_or_default());
                let gs = 1.0 + g2.amax();
                let hs = 1.0 + h2.amax();
                assert!((g1 - g2).amax() < 1e-10 * gs, "gradient {g1} vs {g2}");
                assert!((h1 - h2).amax() < 1e-9 * hs, "Hessian {h1} vs {h2}");
            }
        };
        // the direct reference at the full coordinates
        let q = DVector::from_column_slice(&z[..4]);
        let kin = kinematics(&model, &q, &DVector::zeros(4));
        let c = sys.contact();
        let p = point_position(&kin, Some(c.body), &c.point.map(D::from));
        let gap = (p - c.plane_point.map(D::from)).dot(&c.normal.map(D::from)) - D::from(c.radius);
        let jac = point_jacobian(&model, &kin, Some(c.body), &p);
        let row = |d: &Vector3<f64>| -> Vec<D> {
            (0..4).map(|k| jac.column(k).dot(&d.map(D::from))).collect()
        };
        let (g, n, b) = sys.contact_frame(&z[..4]);
        compare(&[g], &[gap]);
        compare(&n, &row(&c.normal));
        compare(&b, &row(&c.tangent));
        let foot_p = point_position(&kin, Some(shank), &foot.map(D::from));
        let (dx, dy) = ((foot_p.x - D::from(0.5)) / 0.25, foot_p.y / 0.1);
        compare(&sys.path(&z[..4]), &[dx * dx + dy * dy, foot_p.y]);
        let minv = mass_matrix(&model, &q).cholesky().unwrap().inverse();
        let r = &z[4..8];
        let expected: Vec<D> = (0..4)
            .map(|i| (0..4).fold(D::from(0.0), |s, j| s + minv[(i, j)] * r[j]))
            .collect();
        compare(&sys.minv(&z[..4], r), &expected);
        // the free acceleration through the public interface (the cache serves the second call)
        let (fv, _) = sys.accelerations(&z[..4], &z[4..8], z[0], &z[8..], &[]);
        compare(&fv, &sys.free_acceleration(&z));
        let (fv, _) = sys.accelerations(&z[..4], &z[4..8], z[0], &z[8..], &[]);
        compare(&fv, &sys.free_acceleration(&z));
    }
}
