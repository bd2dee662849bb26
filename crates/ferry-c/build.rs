//! Builds the C half of the library (printf and scanf on glibc's own
//! formatter and scanner) and tells C users where the headers are.

fn main() {
    println!("cargo:rerun-if-changed=csrc/format.c");
    println!("cargo:rerun-if-changed=include");
    cc::Build::new()
        .file("csrc/format.c")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra")
        .compile("ferryformat");
    let inc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    println!("cargo:include={}", inc.display());
}
