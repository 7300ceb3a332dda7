//! Exact first and second derivatives of a [`ModelSystem`]'s functions at a fraction of the
//! cost of running the rigid-body algorithms on the NLP's large dual numbers.
//!
//! The NLP differentiates its blocks with dual numbers over up to 16 block variables
//! (second-order vector duals for the Hessian, [`crate::nlp`]); run on those, CRBA, RNEA and
//! the kinematics cost hundreds of times their `f64` price. But the model's functions depend
//! only on z = (q) (gap, normal, tangent, M⁻¹, path constraints) or z = (q, v) (the passive
//! and bias forces; the free acceleration is then M⁻¹ (Pᵀu + f_passive − h) in the NLP's
//! scalars). So each group of functions is evaluated once at the real point with
//! second-order duals over z alone — value F₀, gradient g and Hessian H — and composed with
//! the NLP's scalars by the second-order Taylor polynomial
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
use num_dual::{Dual2SVec64, Dual64};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Largest number of inner variables (2 n_q + n_u for the free acceleration) handled by the
/// composition; larger models are evaluated directly.
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
        0..=4 => evaluate::<4>(sys, group, z0),
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
        Group::Forces => sys.passive_minus_bias(&z),
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
    if z.len() > MAX_INNER || std::any::TypeId::of::<T>() == std::any::TypeId::of::<f64>() {
        return None;
    }
    let z0: Vec<f64> = z.iter().map(|x| x.re()).collect();
    let terms = inner(sys, group, &z0)?;
    let m = z.len();
    let d: Vec<T> = z.iter().zip(&z0).map(|(x, x0)| *x - T::from(*x0)).collect();
    // δᵢδⱼ once for all functions; they vanish for first-order duals (the Jacobian pass),
    // which then skip the second-order terms
    let first_order = std::any::TypeId::of::<T>() == std::any::TypeId::of::<Dual64>();
    let mut products = Vec::with_capacity(if first_order { 0 } else { m * (m + 1) / 2 });
    if !first_order {
        for i in 0..m {
            for j in 0..=i {
                products.push(d[i] * d[j]);
            }
        }
    }
    Some(
        terms[outputs]
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

/// The entries `outputs` of [`ModelSystem::q_terms`] at q by the composition (`None`:
/// evaluate directly).
pub(super) fn q_terms<T: Real>(
    sys: &ModelSystem,
    q: &[T],
    outputs: Range<usize>,
) -> Option<Vec<T>> {
    compose(sys, Group::QTerms, q, outputs)
}

/// [`ModelSystem::passive_minus_bias`] at z = (q, v) by the composition (`None`: evaluate
/// directly).
pub(super) fn passive_minus_bias<T: Real>(sys: &ModelSystem, z: &[T]) -> Option<Vec<T>> {
    compose(sys, Group::Forces, z, 0..z.len() / 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tf::Cls;
    use nonsmooth_core::Model;

    /// The composed functions carry the same value, gradient and Hessian as the rigid-body
    /// algorithms run directly on the second-order duals (the hopper: 4 coordinates, 2
    /// controls; a point where every term is nonlinear).
    #[test]
    fn composition_has_the_direct_derivatives() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/hopper.toml");
        let model = Model::from_file(path).unwrap();
        let sys = ModelSystem::new(model, None, &["hip".into(), "knee".into()]).unwrap();
        let z0 = [0.3, 0.45, 0.4, -0.7, 0.5, -0.2, 1.5, -2.0, 12.0, -7.0];
        // every variable seeded on a combination of the 10 (as the NLP's group duals are)
        let z: Vec<Dual2SVec64<10>> = z0
            .iter()
            .enumerate()
            .map(|(i, &x)| Dual2SVec64::<10>::from(x).derivative(i) * (1.0 + 0.1 * i as f64))
            .collect();
        let compare = |a: &[Dual2SVec64<10>], b: &[Dual2SVec64<10>]| {
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
        let direct = sys.q_terms(&z[..4]);
        let composed = q_terms(&sys, &z[..4], 0..direct.len()).unwrap();
        compare(&composed, &direct);
        let composed = passive_minus_bias(&sys, &z[..8]).unwrap();
        compare(&composed, &sys.passive_minus_bias(&z[..8]));
        // through the Cls interface as well (the cache serves the second call)
        let (fv, _) = sys.accelerations(&z[..4], &z[4..8], z[0], &z[8..], &[]);
        compare(&fv, &sys.free_acceleration(&z));
    }
}
