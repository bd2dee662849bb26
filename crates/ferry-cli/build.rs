//! Links the `ferry` binary statically, position-dependent; compiles the
//! one C function of the tools (sort -g's long-double comparison).
//!
//! A run over a small file is mostly process start-up. Measured
//! (docs/BENCHMARKS.md, "start-up: the static binary"): a
//! position-independent executable has its ~14 000 absolute pointers
//! patched by the dynamic loader at every start (about 70 page faults,
//! which `-no-pie` removes), and the dynamic loader then still maps and
//! binds `libgcc_s`, `libm` and `libc` — about a third of what was left of
//! `ferry wc` on a 1 KiB file.
//! A static executable has no loader: the kernel maps it and `_start` runs.
//!
//! rustc links a glibc target dynamically unless the whole build has
//! `-C target-feature=+crt-static`, which would also apply to `libferry.so`
//! (a cdylib cannot be built so) and to build scripts. So the final link of
//! the binaries of this package alone is made static here: `-static`, and a
//! directory searched first whose `libc.so`, `libgcc_s.so`, `libm.so` …
//! are linker scripts naming the C library's static archives, so that the
//! `-lc -lgcc_s -lm …` rustc passes resolve to them. The library crates and
//! the test executables are linked as before.
//!
//! What a static glibc still loads at run time: for a multi-byte locale
//! other than UTF-8 (GB18030, EUC-JP …) the gconv module of its charset, a
//! shared object of the glibc that built the binary (tests/tools/wc.rs checks
//! such locales against GNU wc). A binary built on one glibc and copied to
//! a machine with another may fail to decode those locales there: build it
//! where it runs, or dynamically. The same holds for host names:
//! `ferry pipe tcp:HOST:PORT` resolves a name that is not an address
//! through glibc's `getaddrinfo`, whose NSS modules a static binary loads
//! from the glibc that built it (numeric addresses need nothing).
//!
//! Where an archive is missing (no `libc.a`: Debian's libc6-dev has it) or
//! `FERRY_DYNAMIC=1` is set, the binary is linked dynamically and
//! position-dependent, with a warning saying why.
use std::path::{Path, PathBuf};
use std::process::Command;

/// The libraries rustc names for a glibc target, each with the static
/// archives that stand for it.
const LIBS: &[(&str, &[&str])] = &[
    ("gcc_s", &["libgcc_eh.a", "libgcc.a"]),
    ("util", &["libutil.a"]),
    ("rt", &["librt.a"]),
    ("pthread", &["libpthread.a"]),
    ("m", &["libm.a"]),
    ("dl", &["libdl.a"]),
    ("c", &["libc.a", "libgcc_eh.a", "libgcc.a"]),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // sort -g compares in the C library's long double, which Rust lacks.
    println!("cargo:rerun-if-changed=src/tools/sort/general.c");
    cc::Build::new()
        .file("src/tools/sort/general.c")
        .warnings(true)
        .compile("ferry_sort_general");
    println!("cargo:rerun-if-env-changed=FERRY_DYNAMIC");
    println!("cargo:rerun-if-env-changed=CC");
    let gnu_linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    let crt_static = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .unwrap_or_default()
        .split(',')
        .any(|f| f == "crt-static");
    if crt_static {
        // The whole build is static already (rustc chose the start files).
        return;
    }
    println!("cargo:rustc-link-arg-bins=-no-pie");
    if !gnu_linux {
        return;
    }
    if std::env::var_os("FERRY_DYNAMIC").is_some_and(|v| v == "1") {
        println!("cargo:warning=FERRY_DYNAMIC=1: the ferry binary is linked dynamically");
        return;
    }
    match write_scripts() {
        Ok(dir) => {
            println!("cargo:rustc-link-arg-bins=-static");
            println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
        }
        Err(why) => println!(
            "cargo:warning=the ferry binary is linked dynamically (slower start-up): {why}"
        ),
    }
}

/// Writes the linker scripts into `$OUT_DIR/static-libs`; the directory.
fn write_scripts() -> Result<PathBuf, String> {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    let dir = out.join("static-libs");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    for (name, archives) in LIBS {
        let mut paths = Vec::new();
        for a in *archives {
            paths.push(archive(&cc, a)?);
        }
        let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let script = format!(
            "/* written by ferry-cli's build.rs: -l{name} from static archives */\nGROUP ( {} )\n",
            list.join(" ")
        );
        let file = dir.join(format!("lib{name}.so"));
        std::fs::write(&file, script).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(dir)
}

/// The path of a static archive as the C compiler finds it.
fn archive(cc: &str, name: &str) -> Result<PathBuf, String> {
    let o = Command::new(cc)
        .arg(format!("-print-file-name={name}"))
        .output()
        .map_err(|e| format!("running {cc}: {e}"))?;
    let p = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    if !o.status.success() || !p.is_absolute() || !Path::new(&p).is_file() {
        return Err(format!("{cc} does not find {name}"));
    }
    Ok(p)
}
