//! Fuzz target: the Wavefront OBJ reader of mesh colliders. Any bytes must give a mesh or a
//! typed error, never a panic; a mesh that reads must validate and build its collider and
//! convex hull, or give typed errors.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonsmooth_core::io::mesh::MeshFormat;

#[path = "mesh_common.rs"]
mod mesh_common;

fuzz_target!(|bytes: &[u8]| {
    mesh_common::check(bytes, MeshFormat::Obj);
});
