//! Builds the C half of the library (printf and scanf on glibc's own
//! formatter and scanner), tells C users where the headers are, and writes
//! a pkg-config file for the build tree beside the library
//! (`target/<profile>/pkgconfig/ferry.pc`; scripts/install-c.sh writes the
//! installed one).

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=csrc/format.c");
    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-changed=ferry.pc.in");
    cc::Build::new()
        .file("csrc/format.c")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra")
        .compile("ferryformat");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let inc = manifest.join("include");
    println!("cargo:include={}", inc.display());
    // OUT_DIR is <profile dir>/build/ferry-c-<hash>/out; the library lands
    // in <profile dir>.
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    if let Some(libdir) = out.ancestors().nth(3) {
        let template =
            std::fs::read_to_string(manifest.join("ferry.pc.in")).expect("reading ferry.pc.in");
        let pc = template
            .replace("@PREFIX@", &libdir.display().to_string())
            .replace("@LIBDIR@", &libdir.display().to_string())
            .replace("@INCLUDEDIR@", &inc.display().to_string())
            .replace("@VERSION@", env!("CARGO_PKG_VERSION"))
            // Programs built against the build tree find the library there.
            .replace("@RPATH@", " -Wl,-rpath,${libdir}");
        let dir = libdir.join("pkgconfig");
        std::fs::create_dir_all(&dir).expect("creating the pkgconfig directory");
        std::fs::write(dir.join("ferry.pc"), pc).expect("writing ferry.pc");
    }
}
