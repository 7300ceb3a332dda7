//! `impact_set`: set-valued impacts of Halm & Posa (crate `nonsmooth-impact`): the
//! outcome-set approximation (Algorithm 2) and the comparison impact laws.

use crate::convert::{rows_to_py, to_py_matrix, to_py_vector};
use crate::errors::{impact_err, model_err};
use crate::model::{state_or_initial, PyModel};
use nalgebra::DVector;
use nonsmooth_core::ContactSnapshot;
use nonsmooth_impact::laws::{anitescu_potra, routh_single, sequential};
use nonsmooth_impact::sampling::{approximate, CapSampler, SimSettings};
use nonsmooth_impact::ImpactProblem;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

fn law<'py>(
    py: Python<'py>,
    p: &ImpactProblem,
    name: String,
    v: &DVector<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("law", name)?;
    d.set_item("v", to_py_vector(py, v))?;
    d.set_item(
        "normal_velocities",
        to_py_vector(py, &p.normal_velocities(v)),
    )?;
    d.set_item(
        "tangential_velocities",
        to_py_vector(py, &p.tangential_velocities(v)),
    )?;
    d.set_item("kinetic_energy", p.kinetic_energy(v))?;
    Ok(d)
}

/// The set of post-impact velocities of `model` at (q, v) (default: the initial state), by
/// Algorithm 2 of Halm & Posa with `samples` Sobol-sampled cap sequences (cap `cap`, at most
/// `steps` LCP steps each, ε-net `eps`, seed `seed`), plus the comparison laws
/// (Anitescu–Potra solutions, sequential orders, Routh single-contact) when `laws` is true.
///
/// Returns a dict: `v_minus` (nv), `outcomes` (n×nv post-impact velocities),
/// `normal_velocities` (n×nc), `tangential_velocities` (n×Σk), `colliding`, `mean_lcps`,
/// `max_residual`, `rejected`, `Jn`, `Jt`, `notes`, and `laws` (a list of dicts with `law`,
/// `v`, `normal_velocities`, `tangential_velocities`, `kinetic_energy`).
/// Raises `ImpactError` (e.g. no contacts within `margin`) with the Rust message.
#[pyfunction]
#[pyo3(signature = (model, q = None, v = None, samples = 1024, cap = 0.3, steps = 10, eps = 0.0, seed = 1, margin = None, laws = true))]
#[allow(clippy::too_many_arguments)]
fn impact_set<'py>(
    py: Python<'py>,
    model: &PyModel,
    q: Option<PyReadonlyArray1<'py, f64>>,
    v: Option<PyReadonlyArray1<'py, f64>>,
    samples: usize,
    cap: f64,
    steps: usize,
    eps: f64,
    seed: u32,
    margin: Option<f64>,
    laws: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let m = &model.inner;
    let (q, v) = state_or_initial(m, q, v)?;
    let snap = ContactSnapshot::new(m, &q, &v, 0.0).map_err(model_err)?;
    let margin = margin.unwrap_or(m.contact_margin.max(1e-9));
    let p = ImpactProblem::from_snapshot(&snap, margin).map_err(impact_err)?;
    let nc = p.num_contacts();
    let colliding = p.pre_impact_colliding();
    let law_list = PyList::empty(py);
    let (outputs, mean_lcps, max_residual, rejected) = if colliding {
        if laws {
            let ap = anitescu_potra(&p).map_err(impact_err)?;
            for (i, s) in ap.solutions.iter().enumerate() {
                law_list.append(law(py, &p, format!("anitescu-potra #{i}"), &s.v)?)?;
            }
            if nc >= 2 {
                let fwd: Vec<usize> = (0..nc).collect();
                let rev: Vec<usize> = (0..nc).rev().collect();
                for order in [fwd, rev] {
                    let s = sequential(&p, &order, 10, 2.2e-6).map_err(impact_err)?;
                    law_list.append(law(py, &p, format!("sequential {order:?}"), &s.v)?)?;
                }
            }
            for i in 0..nc {
                let vi = routh_single(&p, i, 200).map_err(impact_err)?;
                law_list.append(law(py, &p, format!("routh single contact {i}"), &vi)?)?;
            }
        }
        let res = approximate(
            &p,
            &SimSettings::new(cap, steps),
            eps,
            samples,
            CapSampler::Sobol { seed },
        )
        .map_err(impact_err)?;
        (res.outputs, res.mean_lcps, res.max_residual, res.rejected)
    } else {
        (vec![p.v.clone()], 0.0, 0.0, 0)
    };
    let vn: Vec<DVector<f64>> = outputs.iter().map(|x| p.normal_velocities(x)).collect();
    let vt: Vec<DVector<f64>> = outputs.iter().map(|x| p.tangential_velocities(x)).collect();
    let d = PyDict::new(py);
    d.set_item("v_minus", to_py_vector(py, &p.v))?;
    d.set_item("outcomes", rows_to_py(py, &outputs, p.nv()))?;
    d.set_item("normal_velocities", rows_to_py(py, &vn, nc))?;
    d.set_item("tangential_velocities", rows_to_py(py, &vt, p.jt.nrows()))?;
    d.set_item("colliding", colliding)?;
    d.set_item("mean_lcps", mean_lcps)?;
    d.set_item("max_residual", max_residual)?;
    d.set_item("rejected", rejected)?;
    d.set_item("Jn", to_py_matrix(py, &p.jn))?;
    d.set_item("Jt", to_py_matrix(py, &p.jt))?;
    d.set_item("notes", p.notes.clone())?;
    d.set_item("laws", law_list)?;
    Ok(d)
}

/// Adds `impact_set` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(impact_set, m)?)?;
    Ok(())
}
