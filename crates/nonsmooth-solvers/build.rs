//! Build script: with the `sdp` feature, Clarabel's PSD cones call BLAS/LAPACK through the
//! `blas-src`/`lapack-src` shims, which name no library themselves; link the system OpenBLAS
//! (Debian/Ubuntu `libopenblas-dev`), which provides both.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_FEATURE_SDP");
    if std::env::var_os("CARGO_FEATURE_SDP").is_some() {
        println!("cargo:rustc-link-lib=openblas");
    }
}
