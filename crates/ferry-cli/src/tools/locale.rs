//! The C library's idea of characters in the current locale (what GNU
//! tools use): `setlocale`, `MB_CUR_MAX`, the codeset, and `iswspace`,
//! `iswprint`, `wcwidth` cached per 256-code-point page.

use std::ffi::CStr;

/// `wint_t` on Linux.
type WintT = libc::c_uint;

extern "C" {
    fn iswspace(wc: WintT) -> libc::c_int;
    fn iswprint(wc: WintT) -> libc::c_int;
    fn iswalnum(wc: WintT) -> libc::c_int;
    fn wcwidth(wc: libc::wchar_t) -> libc::c_int;
    fn __ctype_get_mb_cur_max() -> libc::size_t;
    fn wctype(name: *const libc::c_char) -> libc::c_ulong;
    fn iswctype(wc: WintT, desc: libc::c_ulong) -> libc::c_int;
    fn mbrtowc(
        pwc: *mut libc::wchar_t,
        s: *const libc::c_char,
        n: libc::size_t,
        ps: *mut libc::mbstate_t,
    ) -> libc::size_t;
}

/// The character handling of the locale the environment selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charset {
    /// One byte, one character (C/POSIX and other single-byte locales).
    SingleByte,
    /// UTF-8.
    Utf8,
    /// Another multi-byte encoding (decoded with the C library, slowly).
    OtherMultiByte,
}

/// Sets the locale from the environment (`setlocale(LC_ALL, "")`), as GNU
/// tools do at start, and says what kind of charset it has.
pub fn init() -> Charset {
    // SAFETY: called once at start, before any other thread exists; the
    // empty string asks for the environment's locale.
    unsafe {
        libc::setlocale(libc::LC_ALL, c"".as_ptr());
        if __ctype_get_mb_cur_max() <= 1 {
            return Charset::SingleByte;
        }
        let cs = libc::nl_langinfo(libc::CODESET);
        if !cs.is_null() && CStr::from_ptr(cs).to_bytes().eq_ignore_ascii_case(b"UTF-8") {
            Charset::Utf8
        } else {
            Charset::OtherMultiByte
        }
    }
}

/// How a character affects word counting.
pub const NEUTRAL: u8 = 0;
pub const WORD: u8 = 1;
pub const SEP: u8 = 2;

/// GNU wc's "non-breaking spaces", separators unless POSIXLY_CORRECT.
fn nbspace(cp: u32) -> bool {
    matches!(cp, 0x00A0 | 0x2007 | 0x202F | 0x2060)
}

/// A code point's class (low 2 bits) and display width (above), asked of
/// the C library.
fn entry(cp: u32, posix: bool) -> u8 {
    // SAFETY: plain C library queries on a code point.
    let (print, space, width) = unsafe {
        (
            iswprint(cp) != 0,
            iswspace(cp) != 0,
            wcwidth(cp as libc::wchar_t),
        )
    };
    let class = if !print {
        NEUTRAL
    } else if space || (!posix && nbspace(cp)) {
        SEP
    } else {
        WORD
    };
    let w = if print && width > 0 {
        width.min(2) as u8
    } else {
        0
    };
    class | (w << 2)
}

/// Per code point: class in the low 2 bits, display width + 1 above.
pub struct WideTable {
    pages: Vec<Option<Box<[u8; 256]>>>,
    posix: bool,
}

impl WideTable {
    pub fn new() -> WideTable {
        WideTable {
            pages: (0..=0x10FF).map(|_| None).collect(),
            posix: std::env::var_os("POSIXLY_CORRECT").is_some(),
        }
    }

    fn page(&mut self, p: usize) -> &[u8; 256] {
        if self.pages[p].is_none() {
            let mut t = Box::new([0u8; 256]);
            for (i, slot) in t.iter_mut().enumerate() {
                *slot = entry((p << 8 | i) as u32, self.posix);
            }
            self.pages[p] = Some(t);
        }
        self.pages[p].as_deref().unwrap_or(&[0; 256])
    }

    /// (class, display width) of a code point.
    #[inline]
    pub fn get(&mut self, cp: u32) -> (u8, u8) {
        if cp > 0x10FFFF {
            return self.classify(cp);
        }
        let e = self.page((cp >> 8) as usize)[(cp & 0xFF) as usize];
        (e & 3, e >> 2)
    }

    fn classify(&self, cp: u32) -> (u8, u8) {
        let e = entry(cp, self.posix);
        (e & 3, e >> 2)
    }
}

/// A multi-byte decoder's initial shift state.
pub fn initial_state() -> libc::mbstate_t {
    // SAFETY: mbstate_t is plain data; all zeros is the initial state.
    unsafe { std::mem::zeroed() }
}

/// One step of a multi-byte decoder in another encoding, via `mbrtowc`.
/// Returns (bytes used, code point) or None for an invalid byte (skip one)
/// and Some((0, _)) when the bytes end in the middle of a character.
pub fn mbrtowc_step(bytes: &[u8], state: &mut libc::mbstate_t) -> Option<(usize, u32)> {
    let mut wc: libc::wchar_t = 0;
    // SAFETY: valid pointers and length; `state` is the caller's shift state.
    let n = unsafe { mbrtowc(&mut wc, bytes.as_ptr().cast(), bytes.len(), state) };
    match n {
        usize::MAX => {
            // SAFETY: resetting a shift state to its initial value.
            *state = unsafe { std::mem::zeroed() };
            None
        }
        n if n == usize::MAX - 1 => Some((0, 0)),
        0 => Some((1, 0)),
        n => Some((n, wc as u32)),
    }
}

/// True if messages are in the C or POSIX locale (after `init`), where POSIX
/// wants some tools to word things differently (cmp says "char", not "byte").
pub fn messages_in_c_locale() -> bool {
    // SAFETY: a query (null locale), no change; the returned string is
    // read at once.
    unsafe {
        let p = libc::setlocale(libc::LC_MESSAGES, std::ptr::null());
        if p.is_null() {
            return true;
        }
        matches!(CStr::from_ptr(p).to_bytes(), b"C" | b"POSIX")
    }
}

/// The code points the C library puts in a POSIX character class (`alpha`,
/// `upper`, `space`...) in the current locale, as sorted inclusive ranges;
/// None for a name it does not know. Asked once per class and kept, so
/// ask only after `init`.
pub fn class_ranges(name: &str) -> Option<&'static [(u32, u32)]> {
    use std::sync::OnceLock;
    const NAMES: [&str; 12] = [
        "alpha", "digit", "alnum", "upper", "lower", "space", "blank", "punct", "print", "graph",
        "cntrl", "xdigit",
    ];
    static CACHE: [OnceLock<Vec<(u32, u32)>>; 12] = [const { OnceLock::new() }; 12];
    let k = NAMES.iter().position(|&n| n == name)?;
    let v = CACHE[k].get_or_init(|| {
        let Ok(cname) = std::ffi::CString::new(name) else {
            return Vec::new();
        };
        // SAFETY: a NUL-terminated class name; the C library looks it up.
        let desc = unsafe { wctype(cname.as_ptr()) };
        let mut v: Vec<(u32, u32)> = Vec::new();
        for cp in (0..0xD800u32).chain(0xE000..=0x10FFFF) {
            // SAFETY: a plain classification query on a code point.
            if desc != 0 && unsafe { iswctype(cp, desc) } != 0 {
                match v.last_mut() {
                    Some(r) if r.1 + 1 == cp => r.1 = cp,
                    _ => v.push((cp, cp)),
                }
            }
        }
        v
    });
    Some(v)
}

/// True if the C library counts the character alphanumeric in the current
/// locale (GNU grep's word characters are these and `_`).
pub fn is_alnum(c: char) -> bool {
    // SAFETY: a plain classification query on a code point.
    unsafe { iswalnum(c as WintT) != 0 }
}

/// True if the collation (`LC_COLLATE`) is the C library's C or POSIX one
/// (`C.UTF-8` among them), where a bracket range cannot name characters
/// past ASCII in a UTF-8 locale.
pub fn collate_is_c() -> bool {
    // SAFETY: a query (null locale), no change; the returned string is
    // read at once.
    unsafe {
        let p = libc::setlocale(libc::LC_COLLATE, std::ptr::null());
        if p.is_null() {
            return true;
        }
        let name = CStr::from_ptr(p).to_bytes();
        matches!(name, b"C" | b"POSIX") || name.starts_with(b"C.")
    }
}

/// The locale's decimal point and thousands separator, as GNU sort takes
/// them (single bytes; `None` for no separator, as in the C locale).
pub fn numeric_separators() -> (u8, Option<u8>) {
    // SAFETY: localeconv's result is read at once, before any other call
    // could change it; its strings are NUL-terminated.
    unsafe {
        let lc = libc::localeconv();
        if lc.is_null() {
            return (b'.', None);
        }
        let dp = CStr::from_ptr((*lc).decimal_point).to_bytes();
        let ts = CStr::from_ptr((*lc).thousands_sep).to_bytes();
        (
            if dp.len() == 1 { dp[0] } else { b'.' },
            if ts.len() == 1 { Some(ts[0]) } else { None },
        )
    }
}

/// `sort -g`'s order of two keys: each converted by the C library's
/// `strtold` (up to a NUL), as GNU sort compares them — keys that do not
/// convert first, then NaNs by their bytes, then numbers, -0 equal to +0.
pub fn general_numeric_order(x: &[u8], y: &[u8]) -> std::cmp::Ordering {
    extern "C" {
        fn ferry_sort_general(a: *const libc::c_char, b: *const libc::c_char) -> libc::c_int;
    }
    with_c_string(x, |a| {
        with_c_string(y, |b| {
            // SAFETY: two NUL-terminated strings that live for the call;
            // the function only reads them.
            unsafe { ferry_sort_general(a, b) }.cmp(&0)
        })
    })
}

/// Runs `f` on a NUL-terminated copy of `s` up to its first NUL (on the
/// stack when short).
fn with_c_string<T>(s: &[u8], f: impl FnOnce(*const libc::c_char) -> T) -> T {
    let s = &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())];
    let mut small = [0u8; 128];
    if s.len() < small.len() {
        small[..s.len()].copy_from_slice(s);
        f(small.as_ptr().cast())
    } else {
        let mut big = Vec::with_capacity(s.len() + 1);
        big.extend_from_slice(s);
        big.push(0);
        f(big.as_ptr().cast())
    }
}

/// The collation order of `x` and `y` (`strcoll` on the NUL-separated
/// pieces, as gnulib's `memcoll0`).
pub fn collate(x: &[u8], y: &[u8]) -> std::cmp::Ordering {
    if x == y {
        return std::cmp::Ordering::Equal;
    }
    let mut xs = x.split(|&c| c == 0);
    let mut ys = y.split(|&c| c == 0);
    loop {
        match (xs.next(), ys.next()) {
            (Some(a), Some(b)) => {
                let (ca, cb) = (
                    std::ffi::CString::new(a).unwrap_or_default(),
                    std::ffi::CString::new(b).unwrap_or_default(),
                );
                // SAFETY: two NUL-terminated strings.
                let d = unsafe { libc::strcoll(ca.as_ptr(), cb.as_ptr()) };
                if d != 0 {
                    return d.cmp(&0);
                }
            }
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (None, None) => return std::cmp::Ordering::Equal,
        }
    }
}
