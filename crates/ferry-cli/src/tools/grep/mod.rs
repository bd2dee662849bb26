//! `ferry grep`: GNU grep's line selection and output, its exit statuses
//! and its handling of binary files, context, colours and recursion.
//!
//! Input comes through alloc-stream regions (mapped for local files). The
//! pattern list is one regex run over a whole region of lines, so a
//! literal is found by a vectorised substring search and lines are only
//! looked at where something matched — the region is never split into
//! lines first. Context lines are found from the selected ones backwards
//! and forwards, so a run without context pays nothing for them.
//!
//! Binary files, as GNU grep 3 treats them: a file with a NUL byte (or a
//! hole) is binary from the buffer where the NUL shows up: NULs then end
//! lines too, the first selected line ends the file and
//! `grep: FILE: binary file matches` goes to standard error instead of
//! the lines. In a UTF-8 locale a line that would be printed but is not
//! valid UTF-8 is held back the same way. `-a` prints everything, `-I`
//! skips the file from where it turned binary. Reading, a line that a
//! region's end cuts ends at its last NUL (`ferry::stream::Ends`), so a
//! run of NULs is the empty lines it is to GNU, searched in constant
//! memory (/dev/zero), never gathered as one line.

mod args;
mod bracket;
mod color;
mod context;
mod head;
mod help;
mod interval;
mod matcher;
mod pattern;
mod run;
mod search;
mod walk;

use super::common::{self, Tool};
use super::locale::{self, Charset};
use super::output::Out;
use ferry::Stream;
use matcher::{Matcher, Whole};
use pattern::{Flavor, Syntax};
use search::{Failure, Search};
use std::ffi::OsString;
use std::io;

/// What is printed per file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Report {
    Lines,
    Count,
    FilesWith,
    FilesWithout,
    Quiet,
}

/// How the options shape each file's search and output.
struct Opts {
    report: Report,
    invert: bool,
    numbers: bool,
    only: bool,
    with_name: Option<bool>,
    no_messages: bool,
    /// `-a`: binary files are read as text.
    text: bool,
    /// `-I`: a file is dropped where it turns out binary.
    skip_binary: bool,
    max_count: Option<u64>,
    label: String,
    utf8: bool,
    /// `-B` and `-A`: context lines before and after selected ones.
    /// `context_given`: one of -A -B -C was given, even as 0 (groups are
    /// then separated).
    context_given: bool,
    before: usize,
    after: usize,
    /// The line between non-adjacent groups of context (None: no line).
    group_sep: Option<Vec<u8>>,
    /// `-b`: each output line starts with its byte offset.
    byte_offset: bool,
    /// `-T`: numbers padded and a tab before the line.
    initial_tab: bool,
    /// `-Z`: a NUL after each file name instead of its separator.
    null_name: bool,
    /// `--line-buffered`: output written after every line.
    line_buffered: bool,
    /// `-z`: lines end in NUL bytes (and newlines are ordinary bytes).
    nul_data: bool,
    /// `--color`: the SGR sequences to use, when colouring.
    color: Option<color::Colors>,
}

impl Opts {
    fn context(&self) -> bool {
        self.context_given
    }

    /// The byte that ends lines in the input and the output.
    fn eol(&self) -> u8 {
        if self.nul_data {
            0
        } else {
            b'\n'
        }
    }
}

/// A file's search stopped early, or ran to the end.
#[derive(PartialEq, Eq)]
enum Flow {
    Go,
    Stop,
}

/// GNU grep reads 96 KiB at a time (more once a long line has grown its
/// buffer, which then stays grown for later files) and decides "binary"
/// per buffer.
const GNU_BUFFER: u64 = 96 << 10;

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    let charset = locale::init();
    let a = match args::parse(t, args, charset == Charset::Utf8) {
        Ok(a) => a,
        Err(code) => return code,
    };
    run::run(t, a)
}

/// A write error on standard output: GNU grep's message, and its status
/// for trouble (2).
fn write_failed(t: &Tool, e: &io::Error) -> i32 {
    common::write_failed(t, e);
    2
}
