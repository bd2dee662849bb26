//! The errors every layer shares: [`StreamError`] (an I/O error naming the
//! operation and the stream or file it failed on), the helpers that make
//! and word such errors, and [`os_error`], which finds the OS error number
//! beneath any of ferry's errors.
//!
//! This module is the bottom of the library: it names no other module of
//! ferry, so that every layer can use it. Error types of higher layers
//! that carry an OS error beneath them — a failed `aio` request,
//! `bulk::Incomplete`, `transfer::TransferError` — implement
//! [`CarriesOsError`] and [`register`] themselves when one is made:
//! [`os_error`] then finds their error without this module naming them.

use std::any::TypeId;
use std::error::Error;
use std::fmt;
use std::io;
use std::sync::{Arc, OnceLock};

/// An I/O error on a stream, with the operation and the stream's name
/// (its path, `fd N`, or `<memory>`). Wrapped in an `io::Error` of the
/// underlying error's kind; [`os_error`] digs out the errno.
///
/// ```
/// let e = ferry::Stream::open("/no/such/file", &ferry::OpenOptions::read_only()).unwrap_err();
/// assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
/// assert_eq!(e.to_string(), "opening /no/such/file: No such file or directory");
/// assert_eq!(ferry::stream::os_error(&e), Some(2));
/// ```
#[derive(Debug)]
pub struct StreamError {
    op: &'static str,
    name: Arc<str>,
    source: io::Error,
}

impl StreamError {
    /// What was being done: "opening", "reading", "writing", …
    pub fn op(&self) -> &str {
        self.op
    }

    /// The stream's name: its path, `fd N`, or `<memory>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The error underneath.
    pub fn source_error(&self) -> &io::Error {
        &self.source
    }
}

/// The message of an OS error without Rust's " (os error N)" suffix, as
/// C's `strerror` would give it.
pub(crate) fn describe(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if e.raw_os_error().is_some() => s[..i].to_string(),
        _ => s,
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.op, self.name, describe(&self.source))
    }
}

impl Error for StreamError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.source)
    }
}

/// Wraps `e` with the operation and the stream's name (once: an error that
/// already names its stream is passed through).
pub(crate) fn named(op: &'static str, name: &Arc<str>, e: io::Error) -> io::Error {
    if e.get_ref().is_some_and(|r| r.is::<StreamError>()) {
        return e;
    }
    io::Error::new(
        e.kind(),
        StreamError {
            op,
            name: name.clone(),
            source: e,
        },
    )
}

/// The OS error `n` as an `io::Error`.
pub(crate) fn errno(n: i32) -> io::Error {
    io::Error::from_raw_os_error(n)
}

/// An error type of ferry's that may carry an OS error number beneath it
/// (an `io::Error`'s payload): [`os_error`] asks it, once the type is
/// [registered](register).
pub(crate) trait CarriesOsError: Error + Send + Sync + 'static {
    /// The OS error number beneath this error, if there is one.
    fn os_error(&self) -> Option<i32>;
}

/// Asks a payload whether it is a `T`, and if so for its OS error.
type Probe = fn(&(dyn Error + Send + Sync + 'static)) -> Option<Option<i32>>;

fn probe<T: CarriesOsError>(e: &(dyn Error + Send + Sync + 'static)) -> Option<Option<i32>> {
    e.downcast_ref::<T>().map(T::os_error)
}

/// Room for this many registered types (three today).
const TYPES: usize = 8;

/// The registered types, filled from the front, each slot set once: read
/// without a lock, and [`os_error`] may run inside a probe.
static PROBES: [OnceLock<(TypeId, Probe)>; TYPES] = [const { OnceLock::new() }; TYPES];

/// Makes [`os_error`] look into errors of type `T`. Called wherever a `T`
/// is made (before anyone can hold one); later calls find it registered.
pub(crate) fn register<T: CarriesOsError>() {
    let id = TypeId::of::<T>();
    for slot in &PROBES {
        let (t, _) = slot.get_or_init(|| (id, probe::<T>));
        if *t == id {
            return;
        }
    }
    debug_assert!(false, "more error types than error::TYPES");
}

/// The OS error number behind an error, also through a [`StreamError`]
/// or one of the library's other error types that carry one (a failed
/// `aio` request, a `bulk::Incomplete`, a `transfer::TransferError` as
/// `exchange::write_buf` reports one).
///
/// ```
/// let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
/// assert_eq!(ferry::stream::os_error(&e), Some(libc::ENOSPC));
/// assert_eq!(ferry::stream::os_error(&std::io::Error::other("no")), None);
/// ```
pub fn os_error(e: &io::Error) -> Option<i32> {
    if let Some(n) = e.raw_os_error() {
        return Some(n);
    }
    let inner = e.get_ref()?;
    if let Some(s) = inner.downcast_ref::<StreamError>() {
        return s.source.raw_os_error();
    }
    PROBES
        .iter()
        .map_while(OnceLock::get)
        .find_map(|(_, probe)| probe(inner))
        .flatten()
}
