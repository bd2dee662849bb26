//! The OS layer: ferry's raw system calls and feature probes, each
//! wrapped so that the rest of ferry sees safe functions and `io::Error`s.
//! It is the bottom of the library but for `error`: it names no other
//! module of ferry, returns values and never calls up (the lease thread
//! calls back only the function the memory layer gave it).
//!
//! Everything `unsafe` that talks to the kernel lives here (the other home of
//! `unsafe` is the memory layer, `buf` and `pool`). Each block carries a
//! `// SAFETY:` note.

pub(crate) mod channel;
pub(crate) mod fileio;
pub(crate) mod fork;
pub(crate) mod ipc;
pub(crate) mod lease;
pub(crate) mod map;
pub(crate) mod pages;
#[cfg(not(miri))]
pub(crate) mod sigbus;
pub(crate) mod sigguard;
#[cfg(not(miri))]
pub(crate) mod spawn;
pub(crate) mod transfer;
pub(crate) mod uring;
pub(crate) mod vectored;
pub(crate) mod watch;
pub(crate) mod zerocopy;

/// The size of a memory page on this machine, in bytes.
///
/// ```
/// let page = ferry::sys_page_size();
/// assert!(page.is_power_of_two() && page >= 4096);
/// ```
pub fn page_size() -> usize {
    #[cfg(miri)]
    {
        4096
    }
    #[cfg(not(miri))]
    {
        rustix::param::page_size()
    }
}

/// The CPU time this process has used so far: (user, system), as
/// `getrusage(RUSAGE_SELF)` reports it (every thread, live or ended).
///
/// ```
/// let (user, sys) = ferry::process_cpu_time().unwrap();
/// assert!(user + sys < std::time::Duration::from_secs(24 * 3600 * 365));
/// ```
pub fn process_cpu_time() -> std::io::Result<(std::time::Duration, std::time::Duration)> {
    cpu_time(libc::RUSAGE_SELF)
}

/// The CPU time the calling thread has used so far: (user, system)
/// (`getrusage(RUSAGE_THREAD)`).
///
/// ```
/// let (user, sys) = ferry::thread_cpu_time().unwrap();
/// assert!(user + sys <= {
///     let (u, s) = ferry::process_cpu_time().unwrap();
///     u + s + std::time::Duration::from_millis(20)
/// });
/// ```
pub fn thread_cpu_time() -> std::io::Result<(std::time::Duration, std::time::Duration)> {
    cpu_time(libc::RUSAGE_THREAD)
}

/// The CPU time of this process's children that have ended and been
/// waited for: (user, system) (`getrusage(RUSAGE_CHILDREN)`). The
/// difference across one child's `wait` is that child's time.
///
/// ```
/// let before = ferry::children_cpu_time().unwrap();
/// std::process::Command::new("true").status().unwrap();
/// let after = ferry::children_cpu_time().unwrap();
/// assert!(after.0 + after.1 >= before.0 + before.1);
/// ```
pub fn children_cpu_time() -> std::io::Result<(std::time::Duration, std::time::Duration)> {
    cpu_time(libc::RUSAGE_CHILDREN)
}

fn cpu_time(who: libc::c_int) -> std::io::Result<(std::time::Duration, std::time::Duration)> {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is a valid, writable rusage; getrusage fills it.
    let r = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: getrusage succeeded, so it filled the (zeroed) struct.
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| {
        std::time::Duration::from_secs(t.tv_sec.max(0) as u64)
            + std::time::Duration::from_micros(t.tv_usec.clamp(0, 999_999) as u64)
    };
    Ok((tv(ru.ru_utime), tv(ru.ru_stime)))
}

/// Linux's limit on the number of `iovec`s a single `writev` accepts
/// (`UIO_MAXIOV`).
pub const IOV_MAX: usize = 1024;

/// A number that identifies the calling thread among live threads, cheaply
/// (no thread-local lookup): the address of its thread control block.
#[inline(always)]
pub(crate) fn thread_id() -> usize {
    #[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]
    {
        let tcb: usize;
        // SAFETY: on x86-64 Linux, %fs:0 holds the thread control block's
        // own address (the TLS ABI); reading it has no side effects.
        unsafe {
            std::arch::asm!("mov {}, fs:0", out(reg) tcb, options(nostack, preserves_flags, readonly, pure));
        }
        tcb
    }
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux", not(miri))))]
    {
        thread_local! {
            static TOKEN: u8 = const { 0 };
        }
        TOKEN.with(|t| t as *const u8 as usize)
    }
}

/// The CPUs this thread may run on (one system call; `None` if unknown).
/// Cheaper than `std::thread::available_parallelism`, which also reads the
/// cgroup's CPU quota files (a dozen system calls at every start).
pub(crate) fn cpus() -> Option<usize> {
    #[cfg(miri)]
    {
        None
    }
    #[cfg(not(miri))]
    {
        // SAFETY: an all-zero cpu_set_t is a valid, empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a writable cpu_set_t of the size passed; pid 0
        // is the calling thread.
        let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
        // SAFETY: CPU_COUNT only reads the set sched_getaffinity filled.
        (r == 0).then(|| unsafe { libc::CPU_COUNT(&set) } as usize)
    }
}

/// The machine's physical memory in bytes (`_SC_PHYS_PAGES` pages of
/// `_SC_PAGESIZE`; 0 if unknown).
pub(crate) fn physical_memory() -> u64 {
    // SAFETY: sysconf only answers a query; no memory is passed.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages.max(0) as u64).saturating_mul(size.max(0) as u64)
}

/// How many descriptors this process may open (`RLIMIT_NOFILE`'s soft
/// limit; `None` for no limit).
pub(crate) fn open_files_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}
