//! The model files in `examples/` describe the same impact problems as the programmatic
//! models of `nonsmooth_impact::models`: same contacts, same Anitescu–Potra and sequential
//! outcomes.

use nonsmooth_core::{ContactSnapshot, Model};
use nonsmooth_impact::laws::{anitescu_potra, sequential};
use nonsmooth_impact::{models, ImpactProblem};

fn from_file(src: &str) -> ImpactProblem {
    let model = Model::from_toml_str(src, None).unwrap();
    let snap = ContactSnapshot::from_state(&model, &model.initial_state).unwrap();
    ImpactProblem::from_snapshot(&snap, model.contact_margin).unwrap()
}

#[test]
fn box_wall_file_matches_the_programmatic_model() {
    let file = from_file(include_str!("../../../examples/impact_box_wall.toml"));
    let code = models::box_wall().unwrap();
    assert_eq!(file.num_contacts(), 2);
    for p in [&file, &code] {
        let ap = anitescu_potra(p).unwrap();
        assert!(ap.solutions.iter().all(|s| s.v.amax() < 1e-8));
    }
    // Contact order may differ between the two descriptions: compare both orders as a set.
    let outcome = |p: &ImpactProblem| {
        let mut v: Vec<_> = [[0, 1], [1, 0]]
            .iter()
            .map(|o| sequential(p, o, 10, 2.2e-6).unwrap().v)
            .collect();
        v.sort_by(|a, b| a[0].total_cmp(&b[0]));
        v
    };
    for (a, b) in outcome(&file).iter().zip(outcome(&code).iter()) {
        assert!((a - b).amax() < 1e-6, "{a} vs {b}");
    }
    // The sequential B-then-A value of docs/decisions/001-set-valued-impacts.md, E3.
    let ba = &outcome(&file)[0];
    for (x, e) in ba.iter().zip([0.0639, -0.1696, 0.4181]) {
        assert!((x - e).abs() < 5e-4, "{ba}");
    }
}
