//! ferry's C ABI (`libferry.so`, `libferry.a`, headers in `include/ferry`):
//!
//! - `ferry/asi.h`: the Alloc Stream Interface (salloc / sfree and
//!   friends) as the paper's Figure 5 has it;
//! - `ferry/stdio.h`: stdio, source-compatible: a program that includes it
//!   instead of `<stdio.h>` runs on ferry streams unmodified;
//! - `ferry/unistd.h`: emulated Unix I/O (open, read, write, lseek, pread,
//!   pwrite, close, dup) on the same streams;
//! - `ferry/buf.h`: ferry's shared immutable buffers;
//! - `ferry/exchange.h`: buffer exchange, fbufs' `uf_*` calls
//!   (`fy_uf_read`, `fy_uf_write`, `fy_uf_allocate`, …);
//! - `ferry/aio.h`: asynchronous file requests (Titanium's AsyncFile):
//!   start, done/wait with timeouts, all/any, cancel, sticky errors;
//! - `ferry/transfer.h`: `fy_transfer`, a whole input moved to an output
//!   by the kernel's copy paths;
//! - `ferry/sort.h`: the external sort, fixed-size records by a byte key
//!   and lines by their bytes, from one descriptor to another;
//! - `ferry/cgi.h`: programs behind `ferry serve --ipc-cgi`, whose reply
//!   bodies go to the client from their own pool, never copied.
//!
//! One stream serves all four: only the stream buffers data, so a program
//! can `fread` ten bytes, `read` five and `fy_salloc` the rest, and see one
//! offset. The FFI boundary is unsafe by nature; each block says why it
//! holds. No panic crosses it: every `extern "C"` function runs inside
//! `ffi::ffi_guard` (tests/c_abi/ffi_boundary.rs checks), and sizes that come
//! from C are allocated fallibly, so failures are NULL / -1 / EOF and
//! errno as in glibc.

// Every `extern "C"` function here takes C pointers on the contract its
// header states (a FILE from this library, a buffer of the given size, a
// NUL-terminated string); C has no `unsafe` to mark that with.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod aio;
pub mod asi;
pub mod between;
pub mod buf;
pub mod cgi;
pub mod exchange;
mod ffi;
pub mod file;
pub mod ipc;
mod registry;
pub mod sort;
pub mod stdio;
pub mod transfer;
pub mod unistd;

pub use file::FyFile;
