//! Unit tests of the BRE/ERE translation (`pattern.rs`).

use super::*;

fn re(p: &str, syntax: Syntax) -> regex::bytes::Regex {
    let f = Flavor {
        syntax,
        utf8: false,
        icase: false,
        nul_data: false,
    };
    let t = translate(p.as_bytes(), &f, 0)
        .unwrap_or_else(|e| panic!("{p}: {e}"))
        .re;
    regex::bytes::Regex::new(&format!("{}{t}", flags(false)))
        .unwrap_or_else(|e| panic!("{p} -> {t}: {e}"))
}

fn m(p: &str, syntax: Syntax, text: &str) -> Option<String> {
    re(p, syntax)
        .find(text.as_bytes())
        .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned())
}

#[test]
fn bre_operators_are_escaped_and_bare_ones_literal() {
    use Syntax::Basic as B;
    assert_eq!(m("a\\(b\\)*c", B, "xabbbc").as_deref(), Some("abbbc"));
    assert_eq!(m("a\\(bc\\)*d", B, "xabcbd"), None);
    assert_eq!(m("a(b)", B, "a(b)").as_deref(), Some("a(b)"));
    assert_eq!(m("a+", B, "aa+").as_deref(), Some("a+"));
    assert_eq!(m("a\\+", B, "xaaa").as_deref(), Some("aaa"));
    assert_eq!(m("*a", B, "b*a").as_deref(), Some("*a"));
    assert_eq!(m("a^b$c", B, "a^b$c").as_deref(), Some("a^b$c"));
    assert_eq!(m("a\\{2\\}", B, "aaa").as_deref(), Some("aa"));
    assert_eq!(m("x\\|y", B, "y").as_deref(), Some("y"));
}

#[test]
fn ere_braces_that_are_not_intervals_are_literal() {
    use Syntax::Extended as E;
    assert_eq!(m("a{2}", E, "aaa").as_deref(), Some("aa"));
    assert_eq!(m("a{x", E, "a{x").as_deref(), Some("a{x"));
    assert_eq!(m("{1", E, "{1}").as_deref(), Some("{1"));
    // GNU drops a leading interval (with a warning).
    assert_eq!(m("{1}a", E, "{1}a").as_deref(), Some("a"));
    assert_eq!(m("a{1,2", E, "a{1,2").as_deref(), Some("a{1,2"));
    assert_eq!(m("a**", E, "aaa").as_deref(), Some("aaa"));
    assert_eq!(m("(ab)+", E, "ababx").as_deref(), Some("abab"));
    assert_eq!(m("a)", E, "a)").as_deref(), Some("a)"));
}

#[test]
fn brackets_follow_posix() {
    use Syntax::Extended as E;
    assert_eq!(m("[]a]+", E, "x]a]").as_deref(), Some("]a]"));
    assert_eq!(m("[\\n]", E, "\\").as_deref(), Some("\\"));
    assert_eq!(m("[^a]", E, "a\nb").as_deref(), Some("b"));
    assert_eq!(m("[[:digit:]]+", E, "ab123c").as_deref(), Some("123"));
    assert_eq!(m("[a-c-]+", E, "x-abc-y").as_deref(), Some("-abc-"));
    assert!(translate(
        b"[a",
        &Flavor {
            syntax: E,
            utf8: false,
            icase: false,
            nul_data: false,
        },
        0
    )
    .is_err());
    assert!(translate(
        b"[[:nope:]]",
        &Flavor {
            syntax: E,
            utf8: false,
            icase: false,
            nul_data: false,
        },
        0
    )
    .is_err());
}

#[test]
fn fixed_strings_are_literal_and_bytes_stay_bytes() {
    assert_eq!(
        m("a.*b[", Syntax::Fixed, "xa.*b[").as_deref(),
        Some("a.*b[")
    );
    let f = Flavor {
        syntax: Syntax::Fixed,
        utf8: false,
        icase: false,
        nul_data: false,
    };
    let t = translate(b"\xff\x00", &f, 0).unwrap().re;
    let r = regex::bytes::Regex::new(&format!("{}{t}", flags(false))).unwrap();
    assert!(r.is_match(b"a\xff\x00b"));
}

fn tr(p: &str, syntax: Syntax, base: usize) -> Result<Translated, Error> {
    let f = Flavor {
        syntax,
        utf8: false,
        icase: false,
        nul_data: false,
    };
    translate(p.as_bytes(), &f, base)
}

#[test]
fn back_references_are_numbered_and_checked() {
    use Syntax::{Basic as B, Extended as E};
    let t = tr("\\(a\\)\\1", B, 2).unwrap();
    assert!(
        t.backrefs && t.groups == 1 && t.re.ends_with("\\k<3>"),
        "{t:?}"
    );
    assert!(tr("(a)\\1", E, 0).unwrap().backrefs);
    assert!(!tr("\\(a\\)", B, 0).unwrap().backrefs);
    for bad in ["\\(a\\)\\2", "\\(a\\1\\)", "\\(a\\)\\|\\1", "\\1"] {
        assert_eq!(
            tr(bad, B, 0).unwrap_err(),
            "Invalid back reference",
            "{bad}"
        );
    }
}

#[test]
fn intervals_as_glibc_reads_them() {
    use Syntax::{Basic as B, Extended as E};
    let bad = "Invalid content of \\{\\}";
    for p in ["a{}", "a{1,0}", "a{1,2,3}"] {
        assert_eq!(tr(p, E, 0).unwrap_err(), bad, "{p}");
    }
    assert_eq!(tr("a\\{1a\\}", B, 0).unwrap_err(), bad);
    assert_eq!(tr("a\\{1", B, 0).unwrap_err(), "Unmatched \\{");
    let big = "Regular expression too big";
    assert_eq!(tr("b{1000000000}", E, 0).unwrap_err(), big);
    assert_eq!(tr("b{32768}", E, 0).unwrap_err(), big);
    assert!(tr("b{32767}", E, 0).is_ok());
    assert_eq!(m("a{,}", E, "aaa").as_deref(), Some("aaa"));
    assert_eq!(m("a{x", E, "a{x").as_deref(), Some("a{x"));
    let t = tr("*a", E, 0).unwrap();
    assert_eq!(t.warnings, ["* at start of expression"]);
    assert_eq!(m("*a", E, "xa").as_deref(), Some("a"));
}
