//! Links the `ferry` binary as a position-dependent executable.
//!
//! A position-independent one has its ~14 000 absolute pointers (vtables,
//! option and Unicode tables) patched by the dynamic loader at every start:
//! about 80 page faults, most of the start-up cost of a run over a small
//! file (docs/BENCHMARKS.md, "Session 15"). The library crates stay
//! position-independent (libferry.so needs that); only the executable's
//! final link changes.
fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
    println!("cargo:rerun-if-changed=build.rs");
}
