//! Build script. With the `sdp` feature, Clarabel's PSD cones call BLAS/LAPACK through the
//! `blas-src`/`lapack-src` shims, which name no library themselves: it links the system
//! OpenBLAS (Debian/Ubuntu `libopenblas-dev`), which provides both. With the `ipopt` feature it
//! finds IPOPT with pkg-config (Debian `coinor-libipopt-dev`), checks its version (3.11 to
//! 3.14) and selects the C interface's `Bool` type: `int` before 3.14, C's `bool` from 3.14 on
//! (cfg `ipopt_c_bool`). Without either feature it links nothing.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_FEATURE_SDP");
    println!("cargo:rustc-check-cfg=cfg(ipopt_c_bool)");
    if std::env::var_os("CARGO_FEATURE_SDP").is_some() {
        println!("cargo:rustc-link-lib=openblas");
    }
    if std::env::var_os("CARGO_FEATURE_IPOPT").is_some() {
        link_ipopt();
    }
}

fn link_ipopt() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let library = match pkg_config::Config::new()
        .atleast_version("3.11")
        .probe("ipopt")
    {
        Ok(library) => library,
        Err(e) => {
            eprintln!(
                "nonsmooth-solvers (feature `ipopt`): IPOPT ≥ 3.11 was not found by pkg-config \
                 (install `coinor-libipopt-dev` on Debian/Ubuntu, or point PKG_CONFIG_PATH at \
                 ipopt.pc): {e}"
            );
            std::process::exit(1);
        }
    };
    let mut parts = library
        .version
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if (major, minor) > (3, 14) {
        println!(
            "cargo:warning=IPOPT {} is newer than the 3.14 this crate was checked with; its C \
             interface is assumed to be 3.14's",
            library.version
        );
    }
    if (major, minor) >= (3, 14) {
        println!("cargo:rustc-cfg=ipopt_c_bool");
    }
}
