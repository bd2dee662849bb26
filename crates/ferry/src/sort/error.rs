//! The sort's errors: an [`io::Error`] whose inner error is an [`Error`]
//! saying where it happened ([`Place`]: which input, which temporary
//! file or directory, or the output) and why (the OS error, kept as it
//! came so that its number can be read back).

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Where a sort failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Place {
    /// Opening or reading input number `index` (counted from 0, in the
    /// order given), named `name` ([`Input::named`](super::Input::named)).
    Input {
        /// The input's position among the inputs.
        index: usize,
        /// The input's name.
        name: String,
    },
    /// An input of fixed-size records whose length is not a whole number
    /// of them.
    PartialRecord {
        /// The input's position among the inputs.
        index: usize,
        /// The input's name.
        name: String,
        /// The bytes the input holds.
        len: u64,
        /// The record size.
        size: usize,
    },
    /// Creating a temporary file in this directory.
    TempDir(PathBuf),
    /// Writing, or reading back, a temporary file (named for messages:
    /// an unnamed one is named after its directory).
    Temp(String),
    /// Writing the output.
    Output,
}

/// An error of the sort: the place and the cause. It travels as the inner
/// error of an [`io::Error`] of the cause's kind; [`Error::of`] finds it.
///
/// ```
/// use ferry::sort::{Error, Input, Place, Sorter};
/// let e = Sorter::lines(ferry::sort::ByteKey::WHOLE)
///     .sort([Input::path("/no/such/file")])
///     .err()
///     .expect("no such file");
/// let place = Error::of(&e).map(|s| s.place().clone());
/// assert!(matches!(place, Some(Place::Input { index: 0, .. })));
/// assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
/// assert!(e.to_string().contains("/no/such/file"));
/// ```
#[derive(Debug)]
pub struct Error {
    place: Place,
    cause: io::Error,
}

impl Error {
    /// The sort's error inside `e`, if it is one.
    pub fn of(e: &io::Error) -> Option<&Error> {
        e.get_ref()?.downcast_ref::<Error>()
    }

    /// Where it happened.
    pub fn place(&self) -> &Place {
        &self.place
    }

    /// Why: the error the system (or the caller's output) gave.
    pub fn cause(&self) -> &io::Error {
        &self.cause
    }

    /// The place and cause inside `e`, taken apart; `Err(e)` as it was
    /// if it holds no sort error.
    ///
    /// ```
    /// use ferry::sort::{ByteKey, Error, Input, Place, Sorter};
    /// let e = Sorter::lines(ByteKey::WHOLE)
    ///     .sort([Input::path("/no/such/file").named("the list")])
    ///     .err()
    ///     .expect("no such file");
    /// let (place, cause) = Error::into_parts(e).expect("a sort error");
    /// assert_eq!(place, Place::Input { index: 0, name: "the list".into() });
    /// assert_eq!(cause.raw_os_error(), Some(libc::ENOENT));
    /// ```
    pub fn into_parts(e: io::Error) -> Result<(Place, io::Error), io::Error> {
        if Error::of(&e).is_none() {
            return Err(e);
        }
        let kind = e.kind();
        match e.into_inner().map(|b| b.downcast::<Error>()) {
            Some(Ok(s)) => Ok((s.place, s.cause)),
            Some(Err(other)) => Err(io::Error::new(kind, other)),
            None => Err(io::Error::from(kind)),
        }
    }

    /// An [`io::Error`] of `cause`'s kind holding the place and cause.
    pub(crate) fn at(place: Place, cause: io::Error) -> io::Error {
        io::Error::new(cause.kind(), Error { place, cause })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.place {
            Place::Input { name, .. } => write!(f, "{name}: {}", self.cause),
            Place::PartialRecord {
                name, len, size, ..
            } => write!(
                f,
                "{name}: {len} bytes are not a whole number of {size}-byte records"
            ),
            Place::TempDir(d) => write!(
                f,
                "cannot create a temporary file in {}: {}",
                d.display(),
                self.cause
            ),
            Place::Temp(name) => write!(f, "{name}: {}", self.cause),
            Place::Output => write!(f, "writing the output: {}", self.cause),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

/// An error of reading and sorting (before the output): where, and what.
pub(crate) enum Fail {
    /// Reading input `index`, named.
    Read(usize, String, io::Error),
    /// Writing a temporary file (its name).
    Temp(String, io::Error),
    /// Creating a temporary file in a directory.
    TempDir(PathBuf, io::Error),
    /// An input of records whose size is not a whole number of them.
    Partial(usize, String, u64, usize),
}

impl From<Fail> for io::Error {
    fn from(f: Fail) -> io::Error {
        match f {
            Fail::Read(index, name, e) => Error::at(Place::Input { index, name }, e),
            Fail::Temp(n, e) => Error::at(Place::Temp(n), e),
            Fail::TempDir(d, e) => Error::at(Place::TempDir(d), e),
            Fail::Partial(index, name, len, size) => Error::at(
                Place::PartialRecord {
                    index,
                    name,
                    len,
                    size,
                },
                io::Error::new(io::ErrorKind::InvalidData, "a partial record"),
            ),
        }
    }
}

/// An error of the output phase: the name of the temporary file that
/// failed (`None`: the output itself), and why.
pub(crate) type Failure = (Option<String>, io::Error);

/// A [`Failure`] as the public error.
pub(crate) fn failure(f: Failure) -> io::Error {
    match f {
        (Some(n), e) => Error::at(Place::Temp(n), e),
        (None, e) => Error::at(Place::Output, e),
    }
}

/// The OS error alone, where `e` wraps one (a stream's error names its
/// stream; the sort names the input itself).
pub(crate) fn os_only(e: io::Error) -> io::Error {
    match crate::stream::os_error(&e) {
        Some(n) => io::Error::from_raw_os_error(n),
        None => e,
    }
}
