//! Real, well-known C programs, built unmodified: each with its own build
//! system, once against glibc and once with `-include ferry/stdio.h` and
//! libferry, then both run on the same generated inputs (and error cases)
//! and compared byte for byte — status, stdout, stderr, and the files
//! they leave. The sources are fetched once from Debian's archive and
//! their sha256 checked (scripts/real-sources.sh); none is kept in the
//! repository. bzip2 (a compressor), Lua (an interpreter, its io library)
//! and GNU ed (a line editor with a tmpfile scratch buffer).

mod common;
mod real;
