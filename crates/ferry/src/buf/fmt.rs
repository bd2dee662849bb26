//! Debug formatting of byte strings, shared by the buffer types.

use std::fmt;

/// Writes `bytes` as `b"..."` with escapes, eliding the middle of long ones.
pub(crate) fn debug_bytes(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    const SHOW: usize = 64;
    let escape = |f: &mut fmt::Formatter<'_>, part: &[u8]| -> fmt::Result {
        for &b in part {
            write!(f, "{}", std::ascii::escape_default(b))?;
        }
        Ok(())
    };
    f.write_str("b\"")?;
    if bytes.len() <= SHOW {
        escape(f, bytes)?;
    } else {
        escape(f, &bytes[..SHOW / 2])?;
        write!(f, "\"..({} bytes)..b\"", bytes.len() - SHOW)?;
        escape(f, &bytes[bytes.len() - SHOW / 2..])?;
    }
    f.write_str("\"")
}
