//! Pre-compressed siblings (`a.css.br`, `.zst`, `.gz` beside `a.css`),
//! chosen by the request's `Accept-Encoding` (RFC 9110, 12.5.3): the
//! codings the client accepts (q above 0), best q first, then brotli,
//! zstd, gzip — the order their files are usually smallest in.

/// A coding this server serves from a sibling file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Coding {
    /// Its name in `Content-Encoding`.
    pub name: &'static str,
    /// The sibling's suffix.
    pub suffix: &'static str,
}

const CODINGS: [Coding; 3] = [
    Coding {
        name: "br",
        suffix: ".br",
    },
    Coding {
        name: "zstd",
        suffix: ".zst",
    },
    Coding {
        name: "gzip",
        suffix: ".gz",
    },
];

/// The codings `accept` allows, in the order to try their siblings.
pub(crate) fn acceptable(accept: &str) -> Vec<Coding> {
    let mut star: Option<u16> = None;
    let mut named: [Option<u16>; 3] = [None; 3];
    for item in accept.split(',') {
        let mut parts = item.split(';');
        let token = parts.next().unwrap_or("").trim();
        if token.is_empty() {
            continue;
        }
        let mut q = 1000;
        for p in parts {
            if let Some((k, v)) = p.split_once('=') {
                if k.trim().eq_ignore_ascii_case("q") {
                    q = qvalue(v.trim()).unwrap_or(0);
                }
            }
        }
        if token == "*" {
            star = Some(q);
            continue;
        }
        // `x-gzip` is gzip (RFC 9110, 8.4.1.3).
        let token = if token.eq_ignore_ascii_case("x-gzip") {
            "gzip"
        } else {
            token
        };
        if let Some(i) = CODINGS
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(token))
        {
            named[i] = Some(q);
        }
    }
    let mut out: Vec<(u16, usize)> = (0..CODINGS.len())
        .filter_map(|i| named[i].or(star).map(|q| (q, i)))
        .filter(|&(q, _)| q > 0)
        .collect();
    out.sort_by_key(|&(q, i)| (std::cmp::Reverse(q), i));
    out.into_iter().map(|(_, i)| CODINGS[i]).collect()
}

/// A qvalue in thousandths (`1`, `0.5`, `0.125`); None if malformed.
fn qvalue(v: &str) -> Option<u16> {
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut thousandths: u16 = 0;
    for (i, b) in frac.bytes().enumerate() {
        thousandths += u16::from(b - b'0') * [100, 10, 1][i];
    }
    match int {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(a: &str) -> Vec<&'static str> {
        acceptable(a).into_iter().map(|c| c.name).collect()
    }

    #[test]
    fn codings_by_q_then_by_size() {
        assert_eq!(names("gzip, deflate, br, zstd"), ["br", "zstd", "gzip"]);
        assert_eq!(names("gzip"), ["gzip"]);
        assert_eq!(names("gzip;q=1, br;q=0.5"), ["gzip", "br"]);
        assert_eq!(names("br;q=0, *"), ["zstd", "gzip"]);
        assert_eq!(names("*;q=0.1, gzip;q=0.9"), ["gzip", "br", "zstd"]);
        assert_eq!(names("identity"), Vec::<&str>::new());
        assert_eq!(names(""), Vec::<&str>::new());
        assert_eq!(names("GZIP;Q=0.5"), ["gzip"]);
        assert_eq!(names("x-gzip"), ["gzip"]);
        // A malformed qvalue counts as 0.
        assert_eq!(
            names("br;q=2, gzip;q=0.5x, zstd;q=0.0001"),
            Vec::<&str>::new()
        );
        assert_eq!(names("gzip;q=0.000"), Vec::<&str>::new());
    }
}
