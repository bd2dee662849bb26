//! Unit tests of the exchange (real pipes; the behaviour suites are in
//! tests/exchange*.rs).

use super::*;

#[test]
fn caps_parse_with_binary_suffixes_and_reject_nonsense() {
    assert_eq!(parse_cap("4096"), Some(4096));
    assert_eq!(parse_cap("64K"), Some(64 << 10));
    assert_eq!(parse_cap(" 3m "), Some(3 << 20));
    assert_eq!(parse_cap("1G"), Some(1 << 30));
    for bad in ["", "K", "-1", "12Q", "1.5M", "99999999999999999999999"] {
        assert_eq!(parse_cap(bad), None, "{bad:?}");
    }
    assert_eq!(
        parse_cap(&format!("{}G", usize::MAX >> 10)),
        None,
        "overflow"
    );
}

#[test]
fn an_empty_write_makes_no_system_call_and_needs_no_valid_descriptor() {
    // A closed-looking descriptor would fail any call: none is made.
    let (r, w) = std::io::pipe().unwrap();
    drop(r);
    assert_eq!(write_buf(&w, crate::Buf::new()).unwrap(), 0);
    assert_eq!(write_buf(&w, crate::Aggregate::new()).unwrap(), 0);
}
