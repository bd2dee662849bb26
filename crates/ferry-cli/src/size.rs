//! Byte sizes on the command line: `4096`, `64K`, `512MiB`, `1G`.

/// Parses a size with an optional binary suffix (K, M, G, T; `iB`/`B` allowed).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits_end);
    if num.is_empty() {
        return Err(format!("invalid size '{s}': no number"));
    }
    let n: u64 = num
        .parse()
        .map_err(|_| format!("invalid size '{s}': number too large"))?;
    let shift = match suffix.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("invalid size '{s}': unknown suffix '{suffix}'")),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("invalid size '{s}': too large"))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("").is_err());
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("16777216T").is_err());
    }
}
