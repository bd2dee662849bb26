//! Using the C library as a C programmer would: through pkg-config, from
//! the build tree (target/<profile>/pkgconfig/ferry.pc) and from an
//! installed prefix (scripts/install-c.sh), linked shared and static.

use crate::common::{include, libdir};
use std::path::Path;
use std::process::Command;

/// A program on ferry/stdio.h and ferry/asi.h: writes a file with stdio,
/// reads it back with salloc, prints "ok <bytes>".
const PROGRAM: &str = r#"
#include <ferry/stdio.h>
#include <ferry/asi.h>
#include <fcntl.h>
#include <string.h>
int main(void) {
    FILE *f = fopen("data", "w");
    if (!f) return 1;
    for (int i = 0; i < 1000; i++) fprintf(f, "line %d\n", i);
    if (fclose(f) != 0) return 2;
    int err;
    fy_stream *s = fy_sopen("data", O_RDONLY, 0, &err);
    if (!s) return 3;
    ssize_t len = 1 << 20;
    const char *p = fy_salloc(s, &len);
    if (!p || len <= 0 || memcmp(p, "line 0\nline 1\n", 14) != 0) return 4;
    fy_sfree(s, (void *)p);
    fy_sclose(s);
    printf("ok %zd\n", len);
    return 0;
}
"#;

fn pkg_config(path: &Path, args: &[&str]) -> Vec<String> {
    let o = Command::new("pkg-config")
        .env("PKG_CONFIG_PATH", path)
        .env_remove("PKG_CONFIG_LIBDIR")
        .args(args)
        .arg("ferry")
        .output()
        .expect("pkg-config is needed (.ci/run installs it)");
    assert!(
        o.status.success(),
        "pkg-config {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Compiles PROGRAM with `flags` in `dir`, runs it there, expects "ok".
fn build_and_run(dir: &Path, flags: &[String], env: &[(&str, &Path)]) {
    let src = dir.join("prog.c");
    std::fs::write(&src, PROGRAM).expect("writing prog.c");
    let exe = dir.join("prog");
    let o = Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .args(flags)
        .output()
        .expect("running cc");
    assert!(
        o.status.success(),
        "cc {flags:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut c = Command::new(&exe);
    // cargo test puts its target directory (holding a libferry.so) on
    // LD_LIBRARY_PATH; the program gets only what the test gives it.
    c.current_dir(dir).env_remove("LD_LIBRARY_PATH");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("running prog");
    // 1000 lines "line N\n": 10×7 + 90×8 + 900×9 bytes.
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "ok 8890\n",
        "status {:?}, stderr {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_build_tree_pkg_config_file_works() {
    let pc = libdir().join("pkgconfig");
    let version = pkg_config(&pc, &["--modversion"]);
    assert_eq!(version, [env!("CARGO_PKG_VERSION")]);
    let mut flags = pkg_config(&pc, &["--cflags"]);
    flags.extend(pkg_config(&pc, &["--libs"]));
    // No LD_LIBRARY_PATH: the build tree's file carries an rpath.
    let dir = tempfile::tempdir().expect("tempdir");
    build_and_run(dir.path(), &flags, &[]);
}

#[test]
fn an_installed_prefix_works_shared_and_static() {
    let prefix = tempfile::tempdir().expect("tempdir");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/install-c.sh");
    let o = Command::new("bash")
        .arg(&script)
        .arg(prefix.path())
        .arg(libdir())
        .output()
        .expect("running install-c.sh");
    assert!(
        o.status.success(),
        "install-c.sh: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let p = prefix.path();
    for f in [
        "lib/libferry.so",
        "lib/libferry.a",
        "include/ferry/stdio.h",
        "include/ferry/asi.h",
        "include/ferry/unistd.h",
        "include/ferry/buf.h",
        "include/ferry/transfer.h",
        "lib/pkgconfig/ferry.pc",
    ] {
        assert!(p.join(f).is_file(), "{f} not installed");
    }
    for h in ["stdio.h", "asi.h", "unistd.h", "buf.h", "transfer.h"] {
        let installed = std::fs::read(p.join("include/ferry").join(h)).expect("installed header");
        let source = std::fs::read(include().join("ferry").join(h)).expect("source header");
        assert!(installed == source, "{h} installed differs from the source");
    }
    let pc = p.join("lib/pkgconfig");
    assert_eq!(
        pkg_config(&pc, &["--variable=prefix"]),
        [p.display().to_string()]
    );
    // Shared: found through LD_LIBRARY_PATH, as for any library outside
    // the loader's paths.
    let mut flags = pkg_config(&pc, &["--cflags"]);
    flags.extend(pkg_config(&pc, &["--libs"]));
    let shared = tempfile::tempdir().expect("tempdir");
    let lib = p.join("lib");
    build_and_run(shared.path(), &flags, &[("LD_LIBRARY_PATH", &lib)]);
    // Without that path it cannot start: it really used the installed copy.
    let o = Command::new(shared.path().join("prog"))
        .current_dir(shared.path())
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("running the shared program");
    assert!(!o.status.success(), "found a libferry.so it was not given");
    // Static: the archive and the system libraries it needs; the program
    // needs no libferry.so at all.
    let mut flags = pkg_config(&pc, &["--cflags"]);
    flags.push(p.join("lib/libferry.a").display().to_string());
    flags.extend(
        pkg_config(&pc, &["--static", "--libs-only-l"])
            .into_iter()
            .filter(|f| f != "-lferry"),
    );
    let stat = tempfile::tempdir().expect("tempdir");
    build_and_run(stat.path(), &flags, &[]);
    let o = Command::new("readelf")
        .arg("-d")
        .arg(stat.path().join("prog"))
        .output()
        .expect("running readelf");
    let dynamic = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && !dynamic.contains("libferry"),
        "{dynamic}"
    );
}

/// The README's C example, run as written: its lines between the
/// `c-example` markers, in a scratch copy of the repository's layout (the
/// headers and this profile's library where the lines look for them), with
/// no `LD_LIBRARY_PATH`: the rpath must find libferry.so.
#[test]
fn the_readme_c_example_links_and_runs_as_written() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README.md");
    let block = readme
        .split("<!-- c-example -->")
        .nth(1)
        .and_then(|rest| rest.split("<!-- /c-example -->").next())
        .expect("README.md has a c-example block");
    let script: String = block
        .lines()
        .filter(|l| !l.starts_with("```"))
        // The library is built by this test run (libdir below), in this
        // profile's directory; the README builds it with cargo.
        .filter(|l| !l.starts_with("cargo build"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        script.contains("cc ") && script.contains("./hello"),
        "{script}"
    );
    let root = tempfile::tempdir().expect("tempdir");
    let r = root.path();
    std::fs::create_dir_all(r.join("crates/ferry-c")).expect("mkdir");
    std::os::unix::fs::symlink(include(), r.join("crates/ferry-c/include")).expect("symlink");
    std::fs::create_dir_all(r.join("target")).expect("mkdir");
    std::os::unix::fs::symlink(libdir(), r.join("target/release")).expect("symlink");
    let o = Command::new("sh")
        .arg("-ec")
        .arg(&script)
        .current_dir(r)
        .env("PWD", r)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("running sh");
    assert!(
        o.status.success() && o.stdout == b"hello from ferry stdio\n",
        "status {:?}\nstdout {}\nstderr {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // It runs on ferry: the program needs libferry.so.
    let d = Command::new("readelf")
        .arg("-d")
        .arg(r.join("hello"))
        .output()
        .expect("running readelf");
    assert!(String::from_utf8_lossy(&d.stdout).contains("libferry.so"));
}
