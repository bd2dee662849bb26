//! `--color`: GNU grep's SGR sequences, from its defaults, `GREP_COLORS`
//! and the deprecated `GREP_COLOR`.

use super::common::Tool;
use std::io::IsTerminal;

/// The SGR parameters of each part of the output (an empty one is not
/// coloured at all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Colors {
    /// Matched text in a selected line, in a context line.
    pub ms: String,
    pub mc: String,
    /// Whole selected and context lines.
    pub sl: String,
    pub cx: String,
    pub fn_: String,
    pub ln: String,
    pub bn: String,
    pub se: String,
    /// `rv`: with -v, sl and cx swap.
    pub rv: bool,
    /// `ne`: no erase-to-end-of-line after each sequence.
    pub ne: bool,
}

impl Default for Colors {
    fn default() -> Colors {
        Colors {
            ms: "01;31".into(),
            mc: "01;31".into(),
            sl: String::new(),
            cx: String::new(),
            fn_: "35".into(),
            ln: "32".into(),
            bn: "32".into(),
            se: "36".into(),
            rv: false,
            ne: false,
        }
    }
}

/// Whether `--color=WHEN` colours: None for a WHEN GNU does not know.
pub(super) fn wanted(when: &str) -> Option<bool> {
    match when.to_ascii_lowercase().as_str() {
        "always" | "yes" | "force" => Some(true),
        "never" | "no" | "none" => Some(false),
        "auto" | "tty" | "if-tty" => Some(
            std::io::stdout().is_terminal()
                && std::env::var("TERM").is_ok_and(|t| !t.is_empty() && t != "dumb"),
        ),
        _ => None,
    }
}

impl Colors {
    /// The colours in use: GNU's defaults, then `GREP_COLOR` (with GNU's
    /// warning), then `GREP_COLORS`.
    pub(super) fn from_env(t: &Tool) -> Colors {
        let mut c = Colors::default();
        if let Ok(old) = std::env::var("GREP_COLOR") {
            if !old.is_empty() {
                t.error(format_args!(
                    "warning: GREP_COLOR='{old}' is deprecated; use GREP_COLORS='mt={old}'"
                ));
                c.ms = old.clone();
                c.mc = old;
            }
        }
        if let Ok(s) = std::env::var("GREP_COLORS") {
            c.parse(&s);
        }
        c
    }

    /// Applies `GREP_COLORS` capabilities in order; a value with a byte
    /// other than digits and `;` ends the parse there (what came before
    /// stays), as in GNU.
    fn parse(&mut self, spec: &str) {
        for cap in spec.split(':') {
            let (name, value) = match cap.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (cap, None),
            };
            if let Some(v) = value {
                if !v.bytes().all(|b| b.is_ascii_digit() || b == b';') {
                    return;
                }
            }
            match (name, value) {
                ("mt", Some(v)) => {
                    self.ms = v.into();
                    self.mc = v.into();
                }
                ("ms", Some(v)) => self.ms = v.into(),
                ("mc", Some(v)) => self.mc = v.into(),
                ("sl", Some(v)) => self.sl = v.into(),
                ("cx", Some(v)) => self.cx = v.into(),
                ("fn", Some(v)) => self.fn_ = v.into(),
                ("ln", Some(v)) => self.ln = v.into(),
                ("bn", Some(v)) => self.bn = v.into(),
                ("se", Some(v)) => self.se = v.into(),
                ("rv", _) => self.rv = true,
                ("ne", _) => self.ne = true,
                _ => {}
            }
        }
    }

    /// The start of an SGR sequence for `cap`, or nothing for an empty one.
    pub(super) fn start(&self, cap: &str, out: &mut Vec<u8>) {
        if cap.is_empty() {
            return;
        }
        out.extend_from_slice(b"\x1b[");
        out.extend_from_slice(cap.as_bytes());
        out.push(b'm');
        if !self.ne {
            out.extend_from_slice(b"\x1b[K");
        }
    }

    /// The end of an SGR sequence for `cap`.
    pub(super) fn end(&self, cap: &str, out: &mut Vec<u8>) {
        if cap.is_empty() {
            return;
        }
        out.extend_from_slice(b"\x1b[m");
        if !self.ne {
            out.extend_from_slice(b"\x1b[K");
        }
    }

    /// `text` wrapped in `cap`'s colour.
    pub(super) fn wrap(&self, cap: &str, text: &[u8], out: &mut Vec<u8>) {
        self.start(cap, out);
        out.extend_from_slice(text);
        self.end(cap, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grep_colors_parse_in_order_and_stop_at_a_bad_value() {
        let mut c = Colors::default();
        c.parse("ms=7:mt=4:fn=:zz=1:rv");
        assert_eq!(
            (c.ms.as_str(), c.mc.as_str(), c.fn_.as_str()),
            ("4", "4", "")
        );
        assert!(c.rv);
        let mut c = Colors::default();
        c.parse("fn=5:ms=5;x:ln=4");
        assert_eq!(
            (c.fn_.as_str(), c.ms.as_str(), c.ln.as_str()),
            ("5", "01;31", "32")
        );
    }
}
