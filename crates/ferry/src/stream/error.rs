//! Stream errors name what failed and where.

use std::fmt;
use std::io;
use std::sync::Arc;

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

impl std::error::Error for StreamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
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

/// The OS error number behind an error, also through a [`StreamError`]
/// or a [`TransferError`](crate::transfer::TransferError) (as
/// [`exchange::write_buf`](crate::exchange::write_buf) reports one).
pub fn os_error(e: &io::Error) -> Option<i32> {
    if let Some(n) = e.raw_os_error() {
        return Some(n);
    }
    let inner = e.get_ref()?;
    if let Some(s) = inner.downcast_ref::<StreamError>() {
        return s.source.raw_os_error();
    }
    if let Some(r) = inner.downcast_ref::<crate::aio::RequestError>() {
        return r.errno();
    }
    if let Some(b) = inner.downcast_ref::<crate::bulk::Incomplete>() {
        return b.io_error().and_then(os_error);
    }
    inner
        .downcast_ref::<crate::transfer::TransferError>()
        .and_then(|t| os_error(t.io_error()))
}

pub(crate) fn errno(n: i32) -> io::Error {
    io::Error::from_raw_os_error(n)
}
