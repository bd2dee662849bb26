//! The C test suite. Each program in tests/c/ is compiled twice — against
//! glibc and, unmodified, against ferry/stdio.h (`-include`) linked with
//! libferry — and both builds must print the same bytes and exit with the
//! same status. Programs in tests/c/ferry-only/ use ASI, emulated Unix I/O
//! or the buffers (glibc has none of them): they check themselves and must
//! exit 0 and print "ok".

use crate::common::{include, libdir, wait_with_deadline, DEADLINE};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(name)
}

/// Compiles `source` into `out`, for glibc or for ferry.
fn compile(source: &Path, out: &Path, ferry: bool, extra: &[&str]) {
    compile_as(source, out, ferry, true, extra);
}

/// `compile`; for ferry without `-include ferry/stdio.h` when
/// `!force_include` (the program includes it itself, `extra` says how).
fn compile_as(source: &Path, out: &Path, ferry: bool, force_include: bool, extra: &[&str]) {
    let mut c = Command::new("cc");
    c.args([
        "-std=gnu11",
        "-O1",
        "-Wall",
        "-Werror",
        "-Wno-unused-result",
        "-pthread",
    ]);
    c.arg("-o").arg(out).arg(source);
    if ferry {
        let lib = libdir();
        c.arg("-I").arg(include());
        if force_include {
            c.args(["-include", "ferry/stdio.h"]);
        }
        c.args(extra);
        c.arg("-L").arg(lib).arg("-lferry");
        c.arg(format!("-Wl,-rpath,{}", lib.display()));
    }
    let o = c.output().expect("running cc");
    assert!(
        o.status.success(),
        "compiling {} ({}) failed:\n{}",
        source.display(),
        if ferry { "ferry" } else { "glibc" },
        String::from_utf8_lossy(&o.stderr)
    );
}

struct Out {
    status: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

fn run_with(exe: &Path, dir: &Path, stdin: &[u8], args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = Command::new(exe);
    c.arg(dir).args(args).current_dir(dir);
    c.envs(env.iter().copied());
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = c.spawn().expect("running a test program");
    let o = wait_with_deadline(child, stdin.to_vec(), DEADLINE);
    Out {
        status: o.status.code(),
        stdout: o.stdout,
        stderr: o.stderr,
    }
}

/// Both builds of `name`, run in fresh directories with the same input:
/// the same output, the same status.
fn same(name: &str, stdin: &[u8], args: &[&str]) {
    same_with(name, stdin, args, &[])
}

/// `same`, with extra environment variables for both runs.
fn same_with(name: &str, stdin: &[u8], args: &[&str], env: &[(&str, &str)]) {
    same_built(name, stdin, args, env, true, &[]);
}

/// `same_with`; the ferry build force-includes ferry/stdio.h or not, and
/// gets `ferry_extra`.
fn same_built(
    name: &str,
    stdin: &[u8],
    args: &[&str],
    env: &[(&str, &str)],
    force_include: bool,
    ferry_extra: &[&str],
) {
    let work = tempfile::tempdir().expect("tempdir");
    let g = work.path().join("glibc");
    let f = work.path().join("ferry");
    compile(&src(name), &g, false, &[]);
    compile_as(&src(name), &f, true, force_include, ferry_extra);
    let (dg, df) = (work.path().join("dg"), work.path().join("df"));
    std::fs::create_dir(&dg).unwrap();
    std::fs::create_dir(&df).unwrap();
    let a = run_with(&g, &dg, stdin, args, env);
    let b = run_with(&f, &df, stdin, args, env);
    let show = |o: &Out| {
        format!(
            "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    // The programs print the directory they ran in; make it one name.
    let norm = |v: &[u8], d: &Path| {
        String::from_utf8_lossy(v)
            .replace(&d.display().to_string(), "DIR")
            .into_bytes()
    };
    let (ao, bo) = (norm(&a.stdout, &dg), norm(&b.stdout, &df));
    let (ae, be) = (norm(&a.stderr, &dg), norm(&b.stderr, &df));
    assert!(
        a.status == b.status && ao == bo && ae == be,
        "{name}: glibc and ferry differ\n=== glibc\n{}\n=== ferry\n{}",
        show(&a),
        show(&b)
    );
}

/// A ferry-only program: exits 0 and prints "ok".
fn checks_itself(name: &str, extra: &[&str]) {
    checks_itself_with(name, extra, &[]);
}

/// `checks_itself`, run with extra environment variables.
fn checks_itself_with(name: &str, extra: &[&str], env: &[(&str, &str)]) {
    let work = tempfile::tempdir().expect("tempdir");
    let f = work.path().join("ferry");
    compile(&src(name), &f, true, extra);
    let d = work.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let o = run_with(&f, &d, b"", &[], env);
    assert!(
        o.status == Some(0) && o.stdout.ends_with(b"ok\n"),
        "{name}: status {:?}\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn files_reads_writes_and_seeks() {
    same("files.c", b"", &[]);
}

#[test]
fn error_cases() {
    same("errors.c", b"", &[]);
}

#[test]
fn printf_of_every_conversion() {
    same("printf.c", b"", &[]);
}

#[test]
fn scanf_of_numbers_and_strings() {
    let input = b"42 -17 0x1f 017 3.25 -1e-3 word [abc] rest of line\n\
                  12abc 7 x 99999999999999999999 1.5e400 end\n";
    same("scanf.c", input, &[]);
}

#[test]
fn standard_input_from_a_pipe() {
    let mut input = Vec::new();
    for i in 0..20_000 {
        input.extend_from_slice(format!("line {i} {}\n", "x".repeat(i % 300)).as_bytes());
    }
    input.extend_from_slice(b"last line without newline");
    same("stdin.c", &input, &[]);
    same("stdin.c", b"", &[]);
}

#[test]
fn other_streams() {
    same("streams.c", b"", &[]);
}

/// POSIX 2.5.1: after fflush, fseek, fclose and exit the descriptor's
/// offset is the stream's position, and a stream whose descriptor another
/// handle used goes on from the offset that handle left (dup + fdopen, a
/// forked child writing, O_APPEND, a read stream handing over to read(2)).
#[test]
fn descriptor_offsets_follow_the_stream() {
    same("offsets.c", b"", &[]);
}

/// A shell group, `{ prog; cat; } < in 1<> out`, prog
/// built against glibc and against ferry. At exit ferry's streams leave
/// both descriptors' offsets where they stopped: cat reads on after prog's
/// line and writes after prog's output.
#[test]
fn a_shell_group_goes_on_where_the_program_stopped() {
    let work = tempfile::tempdir().expect("tempdir");
    let mut outs = Vec::new();
    for ferry in [false, true] {
        let exe = work.path().join(if ferry { "ferry" } else { "glibc" });
        compile(&src("shell_group.c"), &exe, ferry, &[]);
        let dir = work.path().join(if ferry { "df" } else { "dg" });
        std::fs::create_dir(&dir).unwrap();
        let lines: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.join("in"), lines).unwrap();
        std::fs::write(dir.join("out"), b"").unwrap();
        let script = format!("{{ '{}'; cat; }} < in 1<> out", exe.display());
        let st = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .current_dir(&dir)
            .status()
            .expect("running sh");
        assert!(st.success(), "{script}: {st}");
        outs.push(std::fs::read(dir.join("out")).unwrap());
    }
    let head = |v: &[u8]| String::from_utf8_lossy(&v[..v.len().min(60)]).into_owned();
    assert!(
        outs[1] == outs[0],
        "glibc: {} bytes, {:?}...\nferry: {} bytes, {:?}...",
        outs[0].len(),
        head(&outs[0]),
        outs[1].len(),
        head(&outs[1])
    );
    assert!(outs[0].starts_with(b"prog: line 0\nline 1\n"));
}

/// `<stdio_ext.h>` on ferry's FILE: every function in every state the
/// program reaches (fopen modes, reads, ungetc, writes, flushes, seeks,
/// purges, setvbuf modes, the std streams), stdout a pipe and a file.
#[test]
fn stdio_ext_functions_answer_as_glibc() {
    let input = b"stdin line\nmore\n";
    same("stdio_ext.c", input, &[]);
    same("stdio_ext.c", input, &["file"]);
}

/// `<stdio_ext.h>` included before `<stdio.h>`: force-included
/// ferry/stdio.h still comes first, and a program that includes
/// `<ferry/stdio.h>` itself after `<stdio_ext.h>` (no -include) gets
/// ferry's functions too.
#[test]
fn stdio_ext_in_either_include_order() {
    same("stdio_ext_first.c", b"", &[]);
    same_built(
        "stdio_ext_first.c",
        b"",
        &[],
        &[],
        false,
        &["-DFERRY_DIRECT"],
    );
}

#[test]
fn output_is_flushed_at_exit() {
    same("exit.c", b"", &[]);
}

#[test]
fn threads_never_split_a_line() {
    same("threads.c", b"", &[]);
}

/// fflush(NULL) and a read's flush of line-buffered output walk the open
/// streams while another thread opens and closes them: the walk must
/// never touch a freed FILE (the list lock covers fclose's unregister).
///
/// glibc's malloc is told to fill freed memory (MALLOC_PERTURB_) and to
/// keep no per-thread cache (which skips the fill), so a FILE used after
/// fclose freed it has a garbage lock: the walk hangs or panics instead
/// of quietly reading stale bytes. (Before the fix most runs failed so.)
#[test]
fn flushing_every_stream_while_others_close() {
    same_with(
        "flush_race.c",
        b"",
        &[],
        &[
            ("MALLOC_PERTURB_", "165"),
            ("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0"),
        ],
    );
}

/// A descriptor dup'd from a FILE's works after fclose, as with glibc
/// (ferry used to keep it naming the freed FILE), and a lookup of it that
/// races the fclose never touches the freed FILE (malloc fills freed
/// memory here, as in the test above, so such a use hangs or crashes).
#[test]
fn descriptors_outlive_fclose() {
    same_with(
        "fd_after_fclose.c",
        b"",
        &[],
        &[
            ("MALLOC_PERTURB_", "165"),
            ("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0"),
        ],
    );
}

/// Calls that succeed leave errno as glibc's do (no ENOTTY or ESPIPE
/// from the isatty and lseek a new stream makes).
#[test]
fn successful_calls_keep_errno() {
    same("errno_kept.c", b"input\n", &[]);
}

/// exit() while a thread is blocked in fgets(stdin) on a pipe that stays
/// open: the process exits at once, status 0, with the output buffered
/// in stdout and in a file written out (both builds, the same). Before
/// exit it runs popen, which ferry (unlike glibc) flushes for: that must
/// not wait for the reader either.
#[test]
fn exit_does_not_wait_for_a_blocked_reader() {
    let work = tempfile::tempdir().expect("tempdir");
    let mut outs = Vec::new();
    for ferry in [false, true] {
        let exe = work.path().join(if ferry { "ferry" } else { "glibc" });
        compile(&src("exit_reader.c"), &exe, ferry, &[]);
        let dir = work.path().join(if ferry { "df" } else { "dg" });
        std::fs::create_dir(&dir).unwrap();
        let mut child = Command::new(&exe)
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running exit_reader");
        // Keep the write end of stdin open (and empty) until the end.
        let stdin = child.stdin.take();
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("waiting") {
                break Some(s);
            }
            if start.elapsed() > std::time::Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        drop(stdin);
        let mut out = String::new();
        let mut err = String::new();
        use std::io::Read;
        child
            .stdout
            .take()
            .expect("piped")
            .read_to_string(&mut out)
            .unwrap();
        child
            .stderr
            .take()
            .expect("piped")
            .read_to_string(&mut err)
            .unwrap();
        let name = if ferry { "ferry" } else { "glibc" };
        let status = status.unwrap_or_else(|| {
            panic!(
                "{name}: still running after 10 s (exit or popen waits for the reader)\n{out}{err}"
            )
        });
        let file = std::fs::read_to_string(dir.join("left-open")).unwrap_or_default();
        assert_eq!(status.code(), Some(0), "{name}: {status:?}\n{out}{err}");
        assert_eq!(file, "buffered in a file\n", "{name}: the file");
        outs.push(out);
    }
    assert_eq!(
        outs[1], outs[0],
        "ferry (left) and glibc (right) printed differently"
    );
    assert!(
        outs[0].contains("buffered in stdout, then exit"),
        "{}",
        outs[0]
    );
}

/// Sizes no memory can hold (fy_bufmut_new(SIZE_MAX), salloc of
/// PTRDIFF_MAX bytes, fread whose size * n overflows) fail with NULL, -1
/// or 0 and errno, and the program goes on: nothing panics or aborts.
#[test]
fn impossible_sizes_fail_cleanly() {
    checks_itself("ferry-only/limits.c", &["-include", "ferry/unistd.h"]);
}

/// Read regions are read-only: a write through one of a mapped file
/// faults (in a child process); the bytes and the file stay as they were.
#[test]
fn read_regions_are_read_only() {
    checks_itself("ferry-only/regions.c", &[]);
}

#[test]
fn reading_files_keeps_the_process_single_threaded() {
    checks_itself("ferry-only/single_thread.c", &["-D_GNU_SOURCE"]);
}

#[test]
fn stdio_unix_io_and_asi_on_one_stream() {
    checks_itself("ferry-only/mixed.c", &["-include", "ferry/unistd.h"]);
}

#[test]
fn the_alloc_stream_interface() {
    checks_itself("ferry-only/asi.c", &[]);
}

#[test]
fn buffers() {
    checks_itself("ferry-only/buf.c", &[]);
}

/// fy_transfer: file to file, file to pipe, pipe to file with their
/// stats; EPIPE with no SIGPIPE death, EBADF for bad descriptors.
#[test]
fn transfers_between_files_and_pipes() {
    checks_itself("ferry-only/transfer.c", &[]);
}

/// ferry/transfer.h's endpoints and fy_between: a file range into a
/// socket as padded fixed records (case 4), a ferry buffer into a pipe,
/// two plain descriptors by splice, and the errors.
#[test]
fn endpoints_and_between() {
    checks_itself("ferry-only/between.c", &[]);
}

/// ferry/sort.h: records by a big-endian key (stable, reversed, unique)
/// in memory and through runs, lines from a pipe against qsort, and the
/// errors (EBADF, EINVAL, a partial record, a missing temporary
/// directory's ENOENT).
#[test]
fn records_and_lines_sort_from_c() {
    checks_itself("ferry-only/sort.c", &[]);
}

/// ferry/aio.h on io_uring, on threads and on the automatic choice:
/// round trips, the start-time end-of-file check, a FIFO as the slow
/// device (timeouts, a sticky cancel, the buffer back), a sticky I/O
/// error, any/all, close letting a write land, NULL handles.
#[test]
fn asynchronous_requests() {
    checks_itself("ferry-only/aio.c", &[]);
}

/// ferry/exchange.h: round trips through a pipe, a socketpair (with an
/// echo that writes back each buffer it reads) and a mapped file; a
/// pointer that is not a ferry buffer, a double deallocate, a closed pipe.
#[test]
fn buffer_exchange() {
    checks_itself("ferry-only/exchange.c", &[]);
}

/// ferry/exchange.h under a 64 KiB cap: ENOMEM at once, nothing read
/// without a buffer, the cap lifted by giving one back.
#[test]
fn buffer_exchange_cap() {
    checks_itself_with(
        "ferry-only/exchange_cap.c",
        &[],
        &[("FERRY_EXCHANGE_CAP", "64K")],
    );
}

/// ferry/exchange.h's debug mode: a write after fy_uf_write or
/// fy_uf_deallocate dies of SIGSEGV (in a child); the same program
/// without the mode must not (its children then exit 3, which the
/// program reports as a failure: checked here so that the test proves
/// the mode does the faulting).
#[test]
fn buffer_exchange_protect_mode() {
    checks_itself_with(
        "ferry-only/exchange_protect.c",
        &[],
        &[("FERRY_EXCHANGE_PROTECT", "1")],
    );
    let work = tempfile::tempdir().expect("tempdir");
    let f = work.path().join("ferry");
    compile(&src("ferry-only/exchange_protect.c"), &f, true, &[]);
    let o = run_with(
        &f,
        work.path(),
        b"",
        &[],
        &[("FERRY_EXCHANGE_PROTECT", "0")],
    );
    assert_eq!(o.status, Some(1), "without protect mode no write faults");
}

/// fy_transfer from a descriptor a ferry stream reads (ferry/unistd.h's
/// read and lseek, a FILE's fileno): it starts where the program's reads
/// stopped, and the program's next read goes on after it.
#[test]
fn transfers_from_where_the_program_read() {
    checks_itself(
        "ferry-only/transfer_streams.c",
        &["-include", "ferry/unistd.h"],
    );
}

/// Both builds of tty.c under a pseudo-terminal (util-linux `script`):
/// stdout and stderr share it, so the order of the output shows line
/// buffering (stdout at each newline) and unbuffered stderr.
#[test]
fn line_buffering_on_a_pseudo_terminal() {
    let work = tempfile::tempdir().expect("tempdir");
    let g = work.path().join("glibc");
    let f = work.path().join("ferry");
    compile(&src("tty.c"), &g, false, &[]);
    compile(&src("tty.c"), &f, true, &[]);
    let under_pty = |exe: &Path| {
        let o = Command::new("script")
            .args(["-qec"])
            .arg(exe)
            .arg("/dev/null")
            .stdin(Stdio::null())
            .output()
            .expect("running script(1)");
        (o.status.code(), o.stdout)
    };
    let (a, b) = (under_pty(&g), under_pty(&f));
    assert!(
        String::from_utf8_lossy(&a.1).contains("isatty 1 1"),
        "not on a terminal: {:?}",
        String::from_utf8_lossy(&a.1)
    );
    assert_eq!(
        (a.0, String::from_utf8_lossy(&a.1)),
        (b.0, String::from_utf8_lossy(&b.1)),
        "glibc (left) and ferry (right) differ on a terminal"
    );
}

/// glibc drops what a failed flush could not write: a later fclose has
/// nothing left to fail on.
#[test]
fn failed_flush_drops_the_buffer() {
    same("full_device.c", b"", &[]);
}

/// A write into a pipe with no reader: SIGPIPE as glibc's write(2) gets
/// it (death by default, the handler, or only EPIPE when ignored).
#[test]
fn closed_pipe_raises_sigpipe() {
    same("closed_pipe.c", b"", &[]);
}

/// setvbuf(stdin, _IONBF): reads stop where asked, so a shell command
/// run in between goes on from there (GNU ed's `!read`).
#[test]
fn unbuffered_input_reads_no_further() {
    same("unbuffered_input.c", b"", &[]);
}

/// fmemopen, every mode, against glibc.
#[test]
fn fmemopen_as_glibc() {
    same("fmemopen.c", b"", &[]);
}

/// open_memstream's size and buffer after fflush and fclose, against
/// glibc.
#[test]
fn open_memstream_as_glibc() {
    same("memstream.c", b"", &[]);
}

/// ASI regions on fmemopen and open_memstream streams.
#[test]
fn regions_on_memory_streams() {
    checks_itself("ferry-only/memory_regions.c", &[]);
}

/// A write to a pipe or socket whose reader has gone kills the program
/// with SIGPIPE, as with glibc (ferry's guarded writes used to swallow
/// it: `prog | head -1` ran prog to the end and exited 0); with the
/// signal ignored the write fails with EPIPE.
#[test]
fn sigpipe_kills_as_with_glibc() {
    same("sigpipe.c", b"", &[]);
}

/// ungetc against fflush, fseek and ftell, and seeks that fail, against
/// glibc: fflush discards the pushed-back bytes of a seekable stream (a
/// pipe keeps them), a byte pushed back at offset 0 leaves ftell at 0 (it
/// was -1, EIO, and set ferror), and a failed fseek or ftell sets errno
/// but not ferror, and leaves the position (it moved to LONG_MAX when the
/// lseek of the hand-over failed).
#[test]
fn ungetc_and_failed_seeks_as_glibc() {
    same("unget_seek.c", b"", &[]);
}

/// Streams at the descriptor's own offset over a regular file (fdopen
/// "w" and "a", stdout sent to a file) seek and tell as glibc's (they
/// failed with ESPIPE, and bytes meant to overwrite went to the end); an
/// appending stream counts from the real end of a file another writer
/// appended to, and hands over the offset its write left.
#[test]
fn seeks_at_the_descriptor_offset() {
    same("seek_at_fd.c", b"", &[]);
}

/// A line-buffered stream writes through the last newline and keeps the
/// partial line after it, as glibc's (ferry wrote the partial line too).
#[test]
fn line_buffering_keeps_the_partial_line() {
    same("line_buffered.c", b"", &[]);
}

/// A full buffer that cannot be written out (/dev/full) fails the write
/// call that filled it — fputs, fputc, fwrite, fprintf, inline putc — with
/// ENOSPC and ferror, as glibc's (ferry lost that failure: only fflush
/// and fclose ever failed).
#[test]
fn a_failed_buffer_write_fails_the_call() {
    same("full_writes.c", b"", &[]);
}

/// The end-of-file indicator is sticky: fgets, fread, getline, getdelim
/// and fscanf read nothing more until clearerr or a seek, even from a
/// file that has grown, as glibc's (getc was; the others read on).
#[test]
fn end_of_file_is_sticky() {
    same("sticky_eof.c", b"", &[]);
}

/// freopen gives the old stream's regions back. It kept the old stream's
/// region table: a region of the old stream freed after freopen was
/// rebuilt on the new stream and returned a lease of the new stream's
/// buffer with the same slot number, so that buffer was freed (unmapped)
/// while a live region of the new stream pointed into it.
#[test]
fn freopen_gives_the_old_regions_back() {
    checks_itself("ferry-only/freopen_regions.c", &[]);
}

/// An emulated-I/O call on a negative descriptor fails at once with
/// EBADF, even while another thread waits in fgets(stdin). The lookup took
/// every descriptor up to 2 for a standard stream (it indexed by
/// `fd.max(0)`) and took stdin's FILE lock to check it, so `write(-1, …)`
/// waited for the reader.
#[test]
fn a_negative_descriptor_fails_at_once_while_stdin_is_read() {
    checks_itself("ferry-only/negative_fd.c", &["-include", "ferry/unistd.h"]);
}

/// fscanf over a token longer than 1 MiB in a mapped file ends in linear
/// time. The scanner, when a scan used all that was buffered, asked for one
/// byte more and scanned everything again; a mapped window past 1 MiB is
/// exactly as long as asked, so the view grew one byte per round, each
/// round mapping and rescanning all of it: quadratic, a hang on hostile
/// input.
#[test]
fn scanf_over_a_long_token_is_not_quadratic() {
    checks_itself("ferry-only/scanf_long_token.c", &[]);
}

/// fy_aio_done says 1 only once the kernel has let go of the buffer, also
/// after fy_aio_cancel and fy_aio_clear of a request still running (a
/// blocking write into a FIFO, a worker inside write(2)): the cleared
/// state counted as done while fy_aio_released still said 0, so a program
/// that trusted the header reused the buffer and its new bytes went out
/// through the "finished" write.
#[test]
fn aio_done_waits_until_a_cleared_request_lets_go_of_its_buffer() {
    checks_itself("ferry-only/aio_cleared_buffer.c", &[]);
}

/// fy_aio_set_timeout at its edges: huge and negative timeouts never fire
/// early, a request queued behind a blocked one times out at its own
/// deadline (ETIMEDOUT), on both backends.
#[test]
fn aio_timeouts_at_their_edges() {
    checks_itself("ferry-only/aio_timeouts.c", &[]);
}
