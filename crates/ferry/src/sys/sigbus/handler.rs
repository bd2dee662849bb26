//! The SIGBUS handler itself.
//!
//! It does the least a signal handler can: it saves `errno` (the syscalls it
//! makes, and handlers it calls, must not change what the interrupted code
//! sees), decides whether the signal is a shrunk ferry mapping, and if so
//! puts zero pages under the rest of that mapping. Everything else goes,
//! unchanged, to whatever ferry displaced (see `chain.rs`). It takes no
//! lock, allocates nothing, and makes only async-signal-safe calls: `mmap`,
//! `sigaction`, `pthread_sigmask`, `rt_tgsigqueueinfo`.
//!
//! Calling a displaced handler, it blocks that handler's `sa_mask` as the
//! kernel would; it does not emulate `SA_RESETHAND` (resetting would
//! uninstall ferry's guard) or `SA_NODEFER` (SIGBUS stays blocked while
//! the displaced handler runs, as it is while ferry's does).

use super::chain::{self, Call};
use super::{Entry, FAULTS, HANDSHAKE, INDEX, PAGE};
use std::sync::atomic::Ordering;

type InfoHandler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);
type PlainHandler = extern "C" fn(libc::c_int);

/// Codes the kernel gives a SIGBUS that re-executes the faulting access if
/// the handler returns: the access itself faulted.
fn faulting_access(code: i32) -> bool {
    matches!(
        code,
        libc::BUS_ADRALN | libc::BUS_ADRERR | libc::BUS_OBJERR | libc::BUS_MCEERR_AR
    )
}

pub(super) extern "C" fn on_sigbus(
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    ctx: *mut libc::c_void,
) {
    // SAFETY: `__errno_location` returns this thread's errno slot, valid for
    // the thread's life.
    let errno = unsafe { *libc::__errno_location() };
    let marker = 0u8;
    let (code, addr) = if info.is_null() {
        (0, 0)
    } else {
        // SAFETY: the kernel passes a valid siginfo to SA_SIGINFO handlers,
        // and so does a handler that chains to us with what it was given.
        unsafe { ((*info).si_code, (*info).si_addr() as usize) }
    };
    let call = Call {
        sp: std::ptr::addr_of!(marker) as usize,
        info: info as usize,
        code,
        addr,
    };
    let depth = call.depth();
    // Only an address error inside one of our mappings is "the file
    // shrank". A hardware memory error (BUS_MCEERR_AR/AO) in our mapping is
    // not ours to paper over with zeros, nor is a misaligned access
    // (BUS_ADRALN), an object error (BUS_OBJERR) or a SIGBUS someone sent.
    let ours = depth == 0 && code == libc::BUS_ADRERR && zero_fill(addr);
    if !ours {
        pass_on(&call, depth, sig, info, ctx);
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// If `addr` lies in a registered mapping, replaces the mapping's pages
/// from `addr`'s page to its end with zero-filled memory and marks it
/// faulted. False if it is not ours (or the replacement failed).
fn zero_fill(addr: usize) -> bool {
    HANDSHAKE.enter();
    let hit = INDEX.lookup(addr, |v| {
        // SAFETY: values in the index are live `Entry`s: unregistering
        // unfiles one and waits for us (we entered) before freeing it.
        let e = unsafe { &*(v as *const Entry) };
        e.start <= addr && addr < e.end
    });
    let done = hit.is_some_and(|v| {
        // SAFETY: as above.
        let e = unsafe { &*(v as *const Entry) };
        // Cached at install: no sysconf here.
        let page = PAGE.load(Ordering::Relaxed);
        let from = addr & !(page - 1);
        let len = (e.end - from).next_multiple_of(page);
        // SAFETY: [from, from+len) lies inside a mapping ferry made and
        // still owns (registered; unregistering waits for us before it
        // unmaps); replacing its pages with anonymous ones is one syscall.
        let r = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if r == libc::MAP_FAILED {
            return false;
        }
        e.faulted.store(true, Ordering::Release);
        FAULTS.fetch_add(1, Ordering::AcqRel);
        true
    });
    HANDSHAKE.leave();
    done
}

/// Does with a signal that is not ours what the action ferry displaced
/// `depth` steps down would have done.
fn pass_on(
    call: &Call,
    depth: usize,
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    ctx: *mut libc::c_void,
) {
    let Some(act) = chain::displaced(depth) else {
        return default_action(sig, info);
    };
    match act.sa_sigaction {
        libc::SIG_DFL => default_action(sig, info),
        libc::SIG_IGN => {
            // The kernel never lets an ignored SIGBUS from a faulting access
            // pass: it resets the action to the default and kills. Put the
            // application's SIG_IGN back and return, so that the access
            // faults again under it and the kernel does exactly that. A
            // SIGBUS someone sent is simply ignored, as it would have been.
            if faulting_access(call.code) {
                // SAFETY: a valid action, copied from what sigaction gave us.
                unsafe { libc::sigaction(libc::SIGBUS, &act, std::ptr::null_mut()) };
            }
        }
        h => call.nested(depth, || {
            // As the kernel would: block the handler's sa_mask while it runs.
            let mut old = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            // SAFETY: valid sets; `h` is the handler of a sigaction the
            // kernel accepted, called with the signature its flags promise
            // and with the arguments we were given.
            unsafe {
                libc::pthread_sigmask(libc::SIG_BLOCK, &act.sa_mask, old.as_mut_ptr());
                if act.sa_flags & libc::SA_SIGINFO != 0 {
                    std::mem::transmute::<usize, InfoHandler>(h)(sig, info, ctx);
                } else {
                    std::mem::transmute::<usize, PlainHandler>(h)(sig);
                }
                libc::pthread_sigmask(libc::SIG_SETMASK, old.as_ptr(), std::ptr::null_mut());
            }
        }),
    }
}

/// What SIGBUS's default action would have done: end the process. The
/// default disposition goes back and the signal is queued again, with its
/// siginfo, to this thread; it is blocked while we run, so it is delivered
/// the moment the handler returns, and kills the process with SIGBUS as it
/// would have without ferry (a raised SIGBUS included, which returning
/// alone would have swallowed).
fn default_action(sig: libc::c_int, info: *mut libc::siginfo_t) {
    // SAFETY: a zeroed sigaction with SIG_DFL and an empty mask is valid;
    // the siginfo is the one we were given; queueing to our own thread with
    // a kernel si_code is allowed.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut dfl.sa_mask);
        libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
        if !info.is_null() {
            libc::syscall(
                libc::SYS_rt_tgsigqueueinfo,
                libc::getpid(),
                libc::gettid(),
                sig,
                info,
            );
        } else {
            libc::raise(sig);
        }
    }
}
