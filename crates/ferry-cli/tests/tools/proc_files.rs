//! Files whose size says nothing of their contents: /proc's give 0 and
//! hand out at most a page of records a read, so a read shorter than
//! asked is not their end. Every tool reads them to the end, as GNU's do.

use crate::gnu::{s, same, Corpus};

#[test]
fn files_whose_size_says_nothing_are_read_to_their_end() {
    let c = Corpus::new();
    // Many pages of records, the same to every reader.
    let big = "/proc/kallsyms";
    let len = std::fs::read(big).expect("reading /proc/kallsyms").len();
    assert!(len > 64 << 10, "{big} holds only {len} bytes");
    assert_eq!(std::fs::metadata(big).unwrap().len(), 0);
    for f in [big, "/proc/1/mountinfo", "/proc/filesystems"] {
        same("wc", &s(&[f]), None, c.path(), &[]);
        same("wc", &s(&["-c", f]), None, c.path(), &[]);
        same("grep", &s(&["-c", "", f]), None, c.path(), &[]);
        same("grep", &s(&["-n", "a", f]), None, c.path(), &[]);
        same("cat", &s(&[f]), None, c.path(), &[]);
        same("cut", &s(&["-c1-9", f]), None, c.path(), &[]);
        same("diff", &s(&[f, "/dev/null"]), None, c.path(), &[]);
        same("cmp", &s(&[f, f]), None, c.path(), &[]);
        same("sort", &s(&[f]), None, c.path(), &[("LC_ALL", "C")]);
    }
}
