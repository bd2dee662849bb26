//! The SIGBUS guard beside an application's own SIGBUS handling: which
//! signals ferry keeps (only an address error in its own mappings), and that
//! everything else reaches the application's handler or disposition as it
//! would have without ferry. Each case runs in a child process (this test
//! binary run again with `FERRY_SIGBUS_CASE` set), since it changes the
//! process's SIGBUS disposition or dies of the signal.

use ferry::Buf;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

/// Runs case `name` in a child and returns its output.
fn run_case(name: &str) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &test_name!(child_entry),
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("FERRY_SIGBUS_CASE", name)
        .output()
        .unwrap()
}

fn assert_passed(name: &str) {
    let out = run_case(name);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("case {name} ok")),
        "case {name}: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- the application's handler, as a test program would write it ----

/// How the application's handler behaves.
static MODE: AtomicUsize = AtomicUsize::new(0);
const RECORD: usize = 0;
const FIX_OWN: usize = 1;
const CHAIN: usize = 2;
const CLOBBER_ERRNO: usize = 3;

static CALLS: AtomicUsize = AtomicUsize::new(0);
static BASE_CALLS: AtomicUsize = AtomicUsize::new(0);
static LAST_CODE: AtomicI32 = AtomicI32::new(0);
static LAST_ADDR: AtomicUsize = AtomicUsize::new(0);
/// The application's own mapping `[OWN, OWN + PAGE)`.
static OWN: AtomicUsize = AtomicUsize::new(0);
/// The action the application's handler displaced (a handler address).
static OLD: AtomicUsize = AtomicUsize::new(0);
const PAGE: usize = 4096;

type InfoHandler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

extern "C" fn app_handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel (or ferry, passing it on) gives a valid siginfo.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    CALLS.fetch_add(1, Ordering::SeqCst);
    LAST_CODE.store(code, Ordering::SeqCst);
    LAST_ADDR.store(addr, Ordering::SeqCst);
    match MODE.load(Ordering::SeqCst) {
        CHAIN => {
            let old = OLD.load(Ordering::SeqCst);
            if old > 1 {
                // SAFETY: OLD holds an SA_SIGINFO handler (ferry's).
                let f: InfoHandler = unsafe { std::mem::transmute(old) };
                f(sig, info, ctx);
            }
        }
        CLOBBER_ERRNO => {
            // A careless handler: it changes errno and does not restore it.
            // SAFETY: this thread's errno slot.
            unsafe { *libc::__errno_location() = 9999 };
        }
        FIX_OWN => {
            let own = OWN.load(Ordering::SeqCst);
            if own != 0 && addr >= own && addr < own + PAGE {
                // Our own file shrank: put a zero page there and go on.
                // SAFETY: replaces the page of our own mapping.
                unsafe {
                    libc::mmap(
                        own as *mut libc::c_void,
                        PAGE,
                        libc::PROT_READ,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                        -1,
                        0,
                    );
                }
            } else if code > 0 {
                // A fault we know nothing about: die of it on the retry.
                set_disposition(libc::SIG_DFL);
            }
        }
        _ => {}
    }
}

/// The handler that was there before ferry, in the chaining case.
extern "C" fn base_handler(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    BASE_CALLS.fetch_add(1, Ordering::SeqCst);
}

/// Installs `handler` for SIGBUS (SA_SIGINFO); returns the one it replaced.
fn install(handler: InfoHandler) -> usize {
    // SAFETY: valid sigaction structures.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        assert_eq!(libc::sigaction(libc::SIGBUS, &sa, &mut old), 0);
        old.sa_sigaction
    }
}

fn set_disposition(d: libc::sighandler_t) {
    // SAFETY: SIG_DFL or SIG_IGN with an empty mask.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = d;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}

fn current_handler() -> usize {
    // SAFETY: a query into a valid out pointer.
    unsafe {
        let mut cur: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut cur);
        cur.sa_sigaction
    }
}

/// Sends this thread a SIGBUS with the given code and address, as the
/// kernel would for a fault (allowed when a process signals itself).
fn queue_sigbus(code: i32, addr: usize) {
    #[repr(C)]
    struct Info {
        signo: i32,
        errno: i32,
        code: i32,
        _pad: i32,
        addr: usize,
        _rest: [u64; 13],
    }
    let info = Info {
        signo: libc::SIGBUS,
        errno: 0,
        code,
        _pad: 0,
        addr,
        _rest: [0; 13],
    };
    assert_eq!(
        std::mem::size_of::<Info>(),
        std::mem::size_of::<libc::siginfo_t>()
    );
    // SAFETY: a siginfo-sized, initialised buffer; the signal goes to us.
    let r = unsafe {
        libc::syscall(
            libc::SYS_rt_tgsigqueueinfo,
            libc::getpid(),
            libc::gettid(),
            libc::SIGBUS,
            &info,
        )
    };
    assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
}

fn raise_sigbus() {
    // SAFETY: raising a signal in our own thread.
    assert_eq!(unsafe { libc::raise(libc::SIGBUS) }, 0);
}

// ---- files and mappings ----

fn file_of(dir: &std::path::Path, name: &str, len: usize, byte: u8) -> std::fs::File {
    let p = dir.join(name);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(&vec![byte; len])
        .unwrap();
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&p)
        .unwrap()
}

/// A mapping the application makes itself, behind ferry's back.
fn own_mapping(f: &std::fs::File) -> usize {
    use std::os::fd::AsRawFd;
    // SAFETY: a fresh read-only mapping of a file we opened.
    let m = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            PAGE,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    assert_ne!(m, libc::MAP_FAILED);
    m as usize
}

fn read_at(addr: usize) -> u8 {
    // SAFETY: the callers read inside live mappings.
    unsafe { std::ptr::read_volatile(addr as *const u8) }
}

// ---- the cases ----

/// Only BUS_ADRERR in a ferry mapping is ferry's; every other code at the
/// same address goes to the application's handler, and the mapping stays
/// as it was.
fn case_codes(dir: &std::path::Path) {
    install(app_handler);
    MODE.store(RECORD, Ordering::SeqCst);
    let f = file_of(dir, "a", PAGE, 0x5A);
    // SAFETY: the test itself shrinks the file under the mapping, to
    // exercise the SIGBUS guard (no lease: the file is open for writing).
    let b = unsafe { Buf::map_file_unchecked(&f, 0..PAGE as u64) }.unwrap();
    let at = b.as_ptr() as usize + 100;
    for code in [
        libc::BUS_MCEERR_AR,
        libc::BUS_MCEERR_AO,
        libc::BUS_ADRALN,
        libc::BUS_OBJERR,
        77,
    ] {
        let before = CALLS.load(Ordering::SeqCst);
        queue_sigbus(code, at);
        assert_eq!(
            CALLS.load(Ordering::SeqCst),
            before + 1,
            "code {code} passed on"
        );
        assert_eq!(LAST_CODE.load(Ordering::SeqCst), code);
        assert_eq!(LAST_ADDR.load(Ordering::SeqCst), at);
        assert!(b.is_intact(), "code {code} must not zero the mapping");
        assert_eq!(b[100], 0x5A);
    }
    raise_sigbus();
    assert_eq!(LAST_CODE.load(Ordering::SeqCst), libc::SI_TKILL);
    // The one that is ferry's.
    let before = CALLS.load(Ordering::SeqCst);
    queue_sigbus(libc::BUS_ADRERR, at);
    assert_eq!(CALLS.load(Ordering::SeqCst), before, "ferry kept its own");
    assert!(!b.is_intact());
    assert_eq!(b[100], 0);
}

/// An application installs its own (non-chaining) handler after ferry
/// mapped a file: ferry's next mapping puts ferry's handler back in front,
/// so the earlier mapping is still guarded, and the application's handler
/// still gets the SIGBUSes that are not ferry's.
fn case_later_handler(dir: &std::path::Path) {
    set_disposition(libc::SIG_DFL);
    let f1 = file_of(dir, "a", 2 * PAGE, 0x11);
    // SAFETY: the test itself shrinks the file under the mapping, to
    // exercise the SIGBUS guard (no lease: the file is open for writing).
    let a = unsafe { Buf::map_file_unchecked(&f1, 0..2 * PAGE as u64) }.unwrap();
    MODE.store(FIX_OWN, Ordering::SeqCst);
    install(app_handler);
    let f2 = file_of(dir, "b", PAGE, 0x22);
    // SAFETY: the test itself shrinks the file under the mapping, to
    // exercise the SIGBUS guard (no lease: the file is open for writing).
    let b = unsafe { Buf::map_file_unchecked(&f2, 0..PAGE as u64) }.unwrap();
    assert_eq!(b[0], 0x22);
    f1.set_len(0).unwrap();
    assert_eq!(a[2 * PAGE - 1], 0, "the lost page reads as zeros");
    assert!(!a.is_intact());
    assert_eq!(CALLS.load(Ordering::SeqCst), 0, "that one was ferry's");
    raise_sigbus();
    assert_eq!(CALLS.load(Ordering::SeqCst), 1);
    assert_eq!(LAST_CODE.load(Ordering::SeqCst), libc::SI_TKILL);
    // A file of the application's own shrinks under its own mapping.
    let f3 = file_of(dir, "c", PAGE, 0x33);
    let own = own_mapping(&f3);
    OWN.store(own, Ordering::SeqCst);
    assert_eq!(read_at(own + 10), 0x33);
    f3.set_len(0).unwrap();
    assert_eq!(read_at(own + 10), 0, "the application fixed its own fault");
    assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    assert_eq!(LAST_CODE.load(Ordering::SeqCst), libc::BUS_ADRERR);
    assert_eq!(LAST_ADDR.load(Ordering::SeqCst), own + 10);
}

/// The application's handler, installed after ferry's, chains to the action
/// it replaced (ferry's) as a good handler does; ferry, installed in front
/// of it again, must then go on to what was there before ferry rather than
/// back to the application's handler (which would loop until the stack ran
/// out).
fn case_chaining_handler(dir: &std::path::Path) {
    install(base_handler);
    let f1 = file_of(dir, "a", PAGE, 0x11);
    // SAFETY: the test itself shrinks the file under the mapping, to
    // exercise the SIGBUS guard (no lease: the file is open for writing).
    let a = unsafe { Buf::map_file_unchecked(&f1, 0..PAGE as u64) }.unwrap();
    MODE.store(CHAIN, Ordering::SeqCst);
    OLD.store(install(app_handler), Ordering::SeqCst);
    let f2 = file_of(dir, "b", PAGE, 0x22);
    // SAFETY: the test itself shrinks the file under the mapping, to
    // exercise the SIGBUS guard (no lease: the file is open for writing).
    let _b = unsafe { Buf::map_file_unchecked(&f2, 0..PAGE as u64) }.unwrap();
    assert_ne!(
        current_handler(),
        app_handler as *const () as usize,
        "ferry is in front again"
    );
    raise_sigbus();
    assert_eq!(CALLS.load(Ordering::SeqCst), 1);
    assert_eq!(BASE_CALLS.load(Ordering::SeqCst), 1);
    raise_sigbus();
    assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    assert_eq!(BASE_CALLS.load(Ordering::SeqCst), 2);
    f1.set_len(0).unwrap();
    assert_eq!(a[10], 0);
    assert!(!a.is_intact());
    assert_eq!(CALLS.load(Ordering::SeqCst), 2, "ferry's own fault");
}

/// ferry's handler restores errno: the interrupted code must not see it
/// change, whatever the handlers called on the way do to it.
fn case_errno(dir: &std::path::Path) {
    MODE.store(CLOBBER_ERRNO, Ordering::SeqCst);
    install(app_handler);
    let f = file_of(dir, "a", PAGE, 0x11);
    // SAFETY: the test itself shrinks the file under the mapping, to
    // exercise the SIGBUS guard (no lease: the file is open for writing).
    let a = unsafe { Buf::map_file_unchecked(&f, 0..PAGE as u64) }.unwrap();
    // SAFETY: this thread's errno slot.
    unsafe { *libc::__errno_location() = 1234 };
    // SAFETY: signals our own thread; the wrapper leaves errno alone on
    // success.
    let r = unsafe {
        libc::syscall(
            libc::SYS_tgkill,
            libc::getpid(),
            libc::gettid(),
            libc::SIGBUS,
        )
    };
    // SAFETY: as above.
    let e = unsafe { *libc::__errno_location() };
    assert_eq!((r, e), (0, 1234), "errno after a SIGBUS passed on");
    assert_eq!(CALLS.load(Ordering::SeqCst), 1);
    f.set_len(0).unwrap();
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = 4321 };
    assert_eq!(a[5], 0);
    // SAFETY: as above.
    assert_eq!(unsafe { *libc::__errno_location() }, 4321);
}

/// SIG_IGN before ferry: a raised SIGBUS stays ignored (and ferry stays in
/// place), while a faulting access dies of SIGBUS, as the kernel makes it
/// for an ignored SIGBUS. The parent checks the death.
fn case_ignored(dir: &std::path::Path) {
    set_disposition(libc::SIG_IGN);
    let f = file_of(dir, "a", PAGE, 0x11);
    // SAFETY: the test itself shrinks the file under the mapping, to
    // exercise the SIGBUS guard (no lease: the file is open for writing).
    let a = unsafe { Buf::map_file_unchecked(&f, 0..PAGE as u64) }.unwrap();
    raise_sigbus();
    raise_sigbus();
    assert_ne!(current_handler(), libc::SIG_IGN, "ferry still guards");
    assert_ne!(current_handler(), libc::SIG_DFL, "ferry still guards");
    f.set_len(0).unwrap();
    assert_eq!(a[5], 0);
    println!("survived the raised ones");
    let g = file_of(dir, "b", PAGE, 0x22);
    let own = own_mapping(&g);
    g.set_len(0).unwrap();
    let v = read_at(own + 1);
    println!("survived an ignored faulting SIGBUS, read {v}");
}

/// SIG_DFL before ferry: a raised SIGBUS kills, as without ferry.
fn case_default_raise(dir: &std::path::Path) {
    set_disposition(libc::SIG_DFL);
    let f = file_of(dir, "a", PAGE, 0x11);
    // SAFETY: the test itself shrinks the file under the mapping, to
    // exercise the SIGBUS guard (no lease: the file is open for writing).
    let _a = unsafe { Buf::map_file_unchecked(&f, 0..PAGE as u64) }.unwrap();
    raise_sigbus();
    println!("survived a raised SIGBUS");
}

#[test]
fn child_entry() {
    let Ok(case) = std::env::var("FERRY_SIGBUS_CASE") else {
        return; // only meaningful in the child
    };
    let dir = tempfile::tempdir().unwrap();
    match case.as_str() {
        "codes" => case_codes(dir.path()),
        "later_handler" => case_later_handler(dir.path()),
        "chaining_handler" => case_chaining_handler(dir.path()),
        "errno" => case_errno(dir.path()),
        "ignored" => case_ignored(dir.path()),
        "default_raise" => case_default_raise(dir.path()),
        _ => panic!("no case {case}"),
    }
    println!("case {case} ok");
}

#[test]
fn only_an_address_error_in_a_ferry_mapping_is_ferrys() {
    assert_passed("codes");
}

#[test]
fn a_handler_installed_after_ferrys_does_not_unguard_ferrys_mappings() {
    assert_passed("later_handler");
}

#[test]
fn a_later_handler_that_chains_back_to_ferry_does_not_loop() {
    assert_passed("chaining_handler");
}

#[test]
fn errno_survives_the_handler() {
    assert_passed("errno");
}

#[test]
fn an_ignored_sigbus_stays_ignored_unless_an_access_faults() {
    let out = run_case("ignored");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("survived the raised ones"), "{out:?}");
    assert!(!stdout.contains("survived an ignored faulting"), "{out:?}");
    assert_eq!(out.status.signal(), Some(libc::SIGBUS), "{out:?}");
}

#[test]
fn a_raised_sigbus_with_the_default_action_kills() {
    let out = run_case("default_raise");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("survived"),
        "{out:?}"
    );
    assert_eq!(out.status.signal(), Some(libc::SIGBUS), "{out:?}");
}
