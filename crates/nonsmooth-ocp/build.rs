//! Links the system IPOPT library (Debian `coinor-libipopt-dev`, C interface `IpStdCInterface.h`).
fn main() {
    println!("cargo:rustc-link-lib=ipopt");
    println!("cargo:rerun-if-changed=build.rs");
}
