//! ferry/ipc.h: `ferry::ipc` for C — buffers passed by reference between
//! processes through the sender's sealed memfd pool.
//!
//! The handles are boxed Rust objects behind opaque pointers. A receiver
//! keeps the buffers its caller holds in a table keyed by their start
//! address (`fy_ipc_recv` puts one in, `fy_ipc_release` takes it out):
//! a pointer that is not a held buffer's start is EINVAL, never a crash.

use crate::ffi::ffi_guard;
use crate::file::{errno_of, set_errno};
use ferry::ipc::{Listener, Receiver, Sender, SenderConfig, Socket};
use ferry::Buf;
use libc::{c_char, c_int, c_void, size_t, ssize_t};
use std::collections::HashMap;
use std::ffi::CStr;
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};
use std::time::Duration;

/// An opaque listening socket (`fy_ipc_listen`).
pub struct FyIpcListener(Listener);

/// An opaque sending end (`fy_ipc_sender_open`).
pub struct FyIpcSender(Sender);

/// An opaque receiving end (`fy_ipc_receiver_open`) and the buffers its
/// caller holds.
pub struct FyIpcReceiver {
    rx: Receiver,
    held: HashMap<usize, Vec<Buf>>,
}

fn fail<T>(e: &std::io::Error, r: T) -> T {
    set_errno(errno_of(e));
    r
}

/// The name a C string holds, or EINVAL.
fn name_of(name: *const c_char) -> Option<String> {
    if name.is_null() {
        set_errno(libc::EINVAL);
        return None;
    }
    // SAFETY: the caller's NUL-terminated string (NULL checked).
    match unsafe { CStr::from_ptr(name) }.to_str() {
        Ok(s) if !s.is_empty() => Some(s.to_owned()),
        _ => {
            set_errno(libc::EINVAL);
            None
        }
    }
}

/// A descriptor the caller hands over, or EBADF.
fn take_fd(fd: c_int) -> Option<Socket> {
    if fd < 0 {
        set_errno(libc::EBADF);
        return None;
    }
    // SAFETY: the C contract: the caller gives the descriptor up (it is
    // ours to close, whatever the outcome).
    Some(Socket::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// A connected pair of ipc sockets (close-on-exec) in `sv`.
#[no_mangle]
pub extern "C" fn fy_ipc_pair(sv: *mut c_int) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        if sv.is_null() {
            set_errno(libc::EINVAL);
            return -1;
        }
        match ferry::ipc::pair() {
            Ok((a, b)) => {
                let (a, b) = (
                    OwnedFd::from(a).into_raw_fd(),
                    OwnedFd::from(b).into_raw_fd(),
                );
                // SAFETY: the caller's array of two ints (NULL checked).
                unsafe {
                    *sv = a;
                    *sv.add(1) = b;
                }
                0
            }
            Err(e) => fail(&e, -1),
        }
    })
}

/// Listens on the abstract Unix name `name` (no file anywhere).
#[no_mangle]
pub extern "C" fn fy_ipc_listen(name: *const c_char) -> *mut FyIpcListener {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        let Some(name) = name_of(name) else {
            return std::ptr::null_mut();
        };
        match Listener::bind(&name) {
            Ok(l) => Box::into_raw(Box::new(FyIpcListener(l))),
            Err(e) => fail(&e, std::ptr::null_mut()),
        }
    })
}

/// The next connection on `l`, waiting at most `timeout_ms` (negative:
/// for ever); its descriptor, or -1 with errno (ETIMEDOUT).
#[no_mangle]
pub extern "C" fn fy_ipc_accept(l: *mut FyIpcListener, timeout_ms: c_int) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        // SAFETY: a listener from fy_ipc_listen, not yet closed (the C
        // contract), or NULL.
        let Some(l) = (unsafe { l.as_ref() }) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        let timeout = u64::try_from(timeout_ms).ok().map(Duration::from_millis);
        match l.0.accept(timeout) {
            Ok(s) => OwnedFd::from(s).into_raw_fd(),
            Err(e) => fail(&e, -1),
        }
    })
}

/// Closes a listener (NULL: nothing).
#[no_mangle]
pub extern "C" fn fy_ipc_listener_close(l: *mut FyIpcListener) {
    ffi_guard((), libc::ENOMEM, || {
        if !l.is_null() {
            // SAFETY: from fy_ipc_listen, closed once (the C contract).
            drop(unsafe { Box::from_raw(l) });
        }
    })
}

/// Connects to the abstract name a listener listens on; the descriptor,
/// or -1 with errno (ECONNREFUSED: nobody listens).
#[no_mangle]
pub extern "C" fn fy_ipc_connect(name: *const c_char) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        let Some(name) = name_of(name) else {
            return -1;
        };
        match ferry::ipc::connect(&name) {
            Ok(s) => OwnedFd::from(s).into_raw_fd(),
            Err(e) => fail(&e, -1),
        }
    })
}

/// The sending end on the connected socket `sock` (taken over, closed on
/// failure too): a pool of `slots` slots of `slot_size` bytes (0: the
/// defaults), sent to the peer. Sends wait for the receiver as long as it
/// lives.
#[no_mangle]
pub extern "C" fn fy_ipc_sender_open(
    sock: c_int,
    slot_size: size_t,
    slots: size_t,
) -> *mut FyIpcSender {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        let Some(sock) = take_fd(sock) else {
            return std::ptr::null_mut();
        };
        let d = SenderConfig::default();
        let config = SenderConfig {
            slot_size: if slot_size == 0 {
                d.slot_size
            } else {
                slot_size
            },
            slots: if slots == 0 { d.slots } else { slots },
            timeout: None,
            ..d
        };
        match Sender::new(sock, config) {
            Ok(tx) => Box::into_raw(Box::new(FyIpcSender(tx))),
            Err(e) => fail(&e, std::ptr::null_mut()),
        }
    })
}

/// Sends `n` bytes at `buf` as one message (copied into the pool, then
/// passed by reference); `n`, or -1 with errno (EPIPE: the receiver went
/// away).
#[no_mangle]
pub extern "C" fn fy_ipc_send(tx: *mut FyIpcSender, buf: *const c_void, n: size_t) -> ssize_t {
    ffi_guard(-1, libc::ENOMEM, || {
        // SAFETY: a sender from fy_ipc_sender_open, not yet closed, used
        // by one thread at a time (the C contract), or NULL.
        let Some(tx) = (unsafe { tx.as_mut() }) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        let Some(bytes) = crate::ffi::c_bytes(buf, n) else {
            return -1;
        };
        match tx.0.send_bytes(bytes) {
            Ok(()) => n as ssize_t,
            Err(e) => fail(&e, -1),
        }
    })
}

/// Closes the sending end in order (the receiver sees the end after what
/// was sent) and frees it; 0, or -1 with errno (the handle is freed
/// either way). NULL: 0.
#[no_mangle]
pub extern "C" fn fy_ipc_sender_close(tx: *mut FyIpcSender) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        if tx.is_null() {
            return 0;
        }
        // SAFETY: from fy_ipc_sender_open, closed once (the C contract).
        let tx = unsafe { Box::from_raw(tx) };
        match tx.0.close() {
            Ok(()) => 0,
            Err(e) => fail(&e, -1),
        }
    })
}

/// The receiving end on the connected socket `sock` (taken over, closed
/// on failure too): waits for the sender's pool, checks and maps it. The
/// peer must be a ferry sender: received bytes are the sender's pages.
#[no_mangle]
pub extern "C" fn fy_ipc_receiver_open(sock: c_int) -> *mut FyIpcReceiver {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        let Some(sock) = take_fd(sock) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the C contract (ferry/ipc.h): the peer on `sock` is a
        // ferry sender, which writes a slot again only once released.
        match unsafe { Receiver::new(sock, None) } {
            Ok(rx) => Box::into_raw(Box::new(FyIpcReceiver {
                rx,
                held: HashMap::new(),
            })),
            Err(e) => fail(&e, std::ptr::null_mut()),
        }
    })
}

/// The next buffer, by reference: `*bufp` points into the sender's pool
/// (read-only), valid until `fy_ipc_release`; returns its length. 0 at
/// the end (the sender closed in order; `*bufp` NULL), -1 with errno on
/// failure (EIO: the sender went away without closing; EINVAL: it broke
/// the protocol).
#[no_mangle]
pub extern "C" fn fy_ipc_recv(rx: *mut FyIpcReceiver, bufp: *mut *const c_void) -> ssize_t {
    ffi_guard(-1, libc::ENOMEM, || {
        // SAFETY: a receiver from fy_ipc_receiver_open, not yet closed,
        // used by one thread at a time (the C contract), or NULL.
        let Some(rx) = (unsafe { rx.as_mut() }) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        if bufp.is_null() {
            set_errno(libc::EINVAL);
            return -1;
        }
        // SAFETY: the caller's out-parameter (NULL checked).
        unsafe { *bufp = std::ptr::null() };
        let b = match rx.rx.read_buf() {
            Ok(b) => b,
            Err(e) => return fail(&e, -1),
        };
        if b.is_empty() {
            return 0;
        }
        let (p, n) = (b.as_ptr(), b.len());
        rx.held.entry(p as usize).or_default().push(b);
        // SAFETY: the caller's out-parameter (NULL checked).
        unsafe { *bufp = p.cast() };
        n as ssize_t
    })
}

/// Gives back a buffer from `fy_ipc_recv` (its start): the sender may
/// reuse its slot. 0, or -1 with EINVAL for a pointer that is not a held
/// buffer's start.
#[no_mangle]
pub extern "C" fn fy_ipc_release(rx: *mut FyIpcReceiver, buf: *const c_void) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        // SAFETY: as in fy_ipc_recv.
        let Some(rx) = (unsafe { rx.as_mut() }) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        let key = buf as usize;
        let Some(list) = rx.held.get_mut(&key) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        list.pop();
        if list.is_empty() {
            rx.held.remove(&key);
        }
        0
    })
}

/// Frees the receiving end and every buffer its caller still holds.
/// NULL: nothing.
#[no_mangle]
pub extern "C" fn fy_ipc_receiver_close(rx: *mut FyIpcReceiver) {
    ffi_guard((), libc::ENOMEM, || {
        if !rx.is_null() {
            // SAFETY: from fy_ipc_receiver_open, closed once (the C
            // contract).
            drop(unsafe { Box::from_raw(rx) });
        }
    })
}
