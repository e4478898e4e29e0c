//! fio's data patterns (`buffer_pattern=`, `verify_pattern=`), parsed as
//! fio's lib/pattern.c parses them, so that a job file's pattern writes the
//! same bytes under stripebench as under fio. A pattern is a concatenation
//! of, in any order:
//!
//! - `0x...` / `0X...`: hex bytes of any length, the first nibble alone when
//!   their count is odd (`0xaaa` is `0a aa`); `0xff0x14` is two numbers;
//! - a decimal number in `[INT_MIN, INT_MAX]`: its bytes little-endian, as
//!   many as its value needs (`66` is `42`, `0` is `00`, `-1` is four `ff`);
//! - `"text"`: its bytes (fio has no escape for a quote);
//! - `'file'`: the bytes of that file (opened as every input is: a regular
//!   file, bounded, following only links root or this user owns);
//! - `%o` (verify_pattern only, as in fio): 8 bytes where each block's
//!   offset is written, little-endian.
//!
//! A block holds the pattern from its start, repeated (the first `len`
//! bytes of it when the pattern is longer).

use std::path::Path;

/// fio's MAX_PATTERN_SIZE: a pattern of this many bytes or more is refused.
pub const MAX_PATTERN: usize = 128 << 20;

/// Bytes of the `%o` format: the block's offset, little-endian.
const OFFSET_LEN: usize = 8;

/// A parsed pattern: its bytes (zeros where `%o` goes) and where each
/// `%o` lies in them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    bytes: Vec<u8>,
    offsets: Vec<usize>,
    text: String,
}

/// Whether `%o` is taken: fio takes it in verify_pattern, not in
/// buffer_pattern (its parser is given no formats there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formats {
    Offset,
    None,
}

impl Pattern {
    /// Parses `text` as fio does; a `'file'` is read with `read_file`
    /// ([`read_pattern_file`] outside tests). The error says what is wrong
    /// where, for a caller that names the option.
    pub fn parse(
        text: &str,
        formats: Formats,
        read_file: &dyn Fn(&Path) -> Result<Vec<u8>, String>,
    ) -> Result<Pattern, String> {
        let mut bytes = Vec::new();
        let mut offsets = Vec::new();
        let mut rest = text;
        if rest.is_empty() {
            return Err("is empty: give hex (0xaa), a decimal number, \"text\" or 'file'".into());
        }
        while !rest.is_empty() {
            let at = text.len() - rest.len();
            let bad = |what: &str| format!("{what} at byte {at} (`{rest}`)");
            rest = match rest.as_bytes()[0] {
                b'\'' => {
                    let end = rest[1..]
                        .find('\'')
                        .ok_or_else(|| bad("a file name with no closing '"))?;
                    let name = &rest[1..1 + end];
                    if name.is_empty() {
                        return Err(bad("'' names no file: give 'NAME'"));
                    }
                    let got = read_file(Path::new(name))
                        .map_err(|e| format!("cannot read the pattern file '{name}': {e}"))?;
                    if got.is_empty() {
                        return Err(format!("the pattern file '{name}' is empty"));
                    }
                    bytes.extend_from_slice(&got);
                    &rest[end + 2..]
                }
                b'"' => {
                    let end = rest[1..]
                        .find('"')
                        .ok_or_else(|| bad("a string with no closing \""))?;
                    if end == 0 {
                        return Err(bad("an empty string"));
                    }
                    bytes.extend_from_slice(&rest.as_bytes()[1..1 + end]);
                    &rest[end + 2..]
                }
                b'%' => {
                    if formats == Formats::None {
                        return Err(bad("a format (%), which fio takes in verify_pattern only"));
                    }
                    if !rest.starts_with("%o") {
                        return Err(bad("a format other than %o (the block's offset)"));
                    }
                    offsets.push(bytes.len());
                    bytes.extend_from_slice(&[0; OFFSET_LEN]);
                    &rest[2..]
                }
                _ => {
                    let (got, used) =
                        number(rest).ok_or_else(|| bad("no number, \"string\", 'file' or %o"))?;
                    bytes.extend_from_slice(&got);
                    &rest[used..]
                }
            };
            if bytes.len() >= MAX_PATTERN {
                return Err(format!(
                    "is {} MiB or more, fio's largest pattern: give a shorter one",
                    MAX_PATTERN >> 20
                ));
            }
        }
        Ok(Pattern {
            bytes,
            offsets,
            text: text.to_string(),
        })
    }

    /// The pattern as it was given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Its bytes (zeros where `%o` goes).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether it holds `%o`: each block then differs by its offset.
    pub fn has_offset(&self) -> bool {
        !self.offsets.is_empty()
    }

    /// Fills `buf`, the block at `offset`, as fio's paste_format does: the
    /// pattern (truncated to the block) with each `%o` (or as much of it as
    /// fits) set to `offset`, then repeated to the block's end.
    pub fn fill(&self, buf: &mut [u8], offset: u64) {
        let n = self.bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        let off = offset.to_le_bytes();
        for &at in self.offsets.iter().take_while(|&&at| at < n) {
            let k = (n - at).min(OFFSET_LEN);
            buf[at..at + k].copy_from_slice(&off[..k]);
        }
        let mut have = n;
        while have < buf.len() {
            let k = have.min(buf.len() - have);
            buf.copy_within(..k, have);
            have += k;
        }
    }

    /// Whether `buf`, read at `offset`, holds what [`Pattern::fill`]
    /// writes there. Without `%o` no copy is made.
    pub fn matches(&self, buf: &[u8], offset: u64) -> bool {
        if self.has_offset() {
            let mut want = vec![0u8; buf.len()];
            self.fill(&mut want, offset);
            return want == buf;
        }
        let p = &self.bytes;
        buf.chunks(p.len()).all(|c| c == &p[..c.len()])
    }
}

/// fio's parse_number on the start of `s`: the bytes and how much of `s`
/// they took, or None where fio fails.
fn number(s: &str) -> Option<(Vec<u8>, usize)> {
    let b = s.as_bytes();
    if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' && b[2].is_ascii_hexdigit() {
        let mut n = b[2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        // `0xff0x14`: the 0 before the next x starts the next number.
        if 2 + n < b.len() && (b[2 + n] | 0x20) == b'x' && b[1 + n] == b'0' {
            n -= 1;
        }
        let digits = &s[2..2 + n];
        // An odd count: the first nibble is a byte of its own.
        let (first, pairs) = digits.split_at(n % 2);
        let mut out = Vec::with_capacity(n.div_ceil(2));
        if !first.is_empty() {
            out.push(u8::from_str_radix(first, 16).ok()?);
        }
        for i in (0..pairs.len()).step_by(2) {
            out.push(u8::from_str_radix(&pairs[i..i + 2], 16).ok()?);
        }
        return Some((out, 2 + n));
    }
    // Decimal, up to a later 0x if there is one (`-100xab` is -10 then 0xab).
    let lower = s.to_ascii_lowercase();
    let stop = match lower.find("0x") {
        Some(0) | None => s.len(),
        Some(k) => k,
    };
    let d = &s[..stop];
    let ws = d.len() - d.trim_start().len();
    let body = &d[ws..];
    let sign = usize::from(body.starts_with(['-', '+']));
    let digits = body[sign..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let used = ws + sign + digits;
    let v: i64 = s[ws..used].parse().ok()?;
    if v > i64::from(i32::MAX) || v < i64::from(i32::MIN) {
        return None;
    }
    if v == 0 {
        return Some((vec![0], used));
    }
    let mut val = v as i32 as u32;
    let mut out = Vec::new();
    while val != 0 {
        out.push((val & 0xff) as u8);
        val >>= 8;
    }
    Some((out, used))
}

/// A pattern file: a regular file of less than fio's largest pattern.
const PATTERN_FILE: crate::base::input::Kind = crate::base::input::Kind {
    holds: "a file of the pattern's bytes",
    max: MAX_PATTERN as u64 - 1,
    pipe: false,
};

/// Reads a `'file'` of a pattern: a link on its path is followed only when
/// root or this user owns it (as for everything stripebench opens as root
/// by a name it was given), and the file is read as every input is: a
/// regular file, bounded.
pub fn read_pattern_file(path: &Path) -> Result<Vec<u8>, String> {
    let fd = crate::base::path::open_unplanted(path).map_err(|e| match e {
        crate::base::path::WalkError::Sys(e) => e.desc().to_string(),
        crate::base::path::WalkError::Planted { at, owner } => format!(
            "{}; copy the file somewhere of your own",
            crate::base::path::WalkError::planted_text(&at, owner)
        ),
    })?;
    let real = crate::base::path::path_of(&fd).map_err(|e| e.desc().to_string())?;
    crate::base::input::read(&real, &PATTERN_FILE).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_file(_: &Path) -> Result<Vec<u8>, String> {
        Err("no files here".into())
    }

    fn p(s: &str) -> Vec<u8> {
        Pattern::parse(s, Formats::Offset, &no_file)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .bytes
    }

    /// The examples of fio's lib/pattern.c, byte for byte.
    #[test]
    fn fio_pattern_examples_parse_to_fios_bytes() {
        assert_eq!(p("\"abcd\""), b"abcd");
        assert_eq!(p("-1024"), [0x00, 0xfc, 0xff, 0xff]);
        assert_eq!(p("66"), [0x42]);
        assert_eq!(p("0xFF0X1"), [0xff, 0x01]);
        assert_eq!(p("%o"), [0; 8]);
        assert_eq!(p("\"123\"0xFFeeCC"), [0x31, 0x32, 0x33, 0xff, 0xee, 0xcc]);
        assert_eq!(
            p("-100xab\"1\"%o\"2\""),
            [0xf6, 0xff, 0xff, 0xff, 0xab, 0x31, 0, 0, 0, 0, 0, 0, 0, 0, 0x32]
        );
        let mut nine = vec![0u8; 8];
        nine.extend([0xde, 0xad, 0xbe, 0xef]);
        nine.extend([0; 8]);
        assert_eq!(p("%o0xdeadbeef%o"), nine);
        assert_eq!(p(&format!("0x{}", "fe".repeat(21))), vec![0xfe; 21]);
    }

    #[test]
    fn odd_hex_and_small_decimals_take_fios_widths() {
        // t0006's verify_pattern: the lone nibble is a byte of its own.
        assert_eq!(p("0xaaa"), [0x0a, 0xaa]);
        assert_eq!(p("0xaa555aa5"), [0xaa, 0x55, 0x5a, 0xa5]);
        assert_eq!(p("0"), [0]);
        assert_eq!(p("256"), [0, 1]);
        assert_eq!(p("-1"), [0xff; 4]);
        assert_eq!(p("0xff0x14"), [0xff, 0x14]);
    }

    #[test]
    fn what_fio_refuses_is_refused() {
        for bad in [
            "",
            "0x",
            "abc",
            "\"open",
            "\"\"",
            "'nofile",
            "%x",
            "2147483648",
            "-2147483649",
        ] {
            assert!(
                Pattern::parse(bad, Formats::Offset, &no_file).is_err(),
                "{bad:?} was taken"
            );
        }
        let e = Pattern::parse("%o", Formats::None, &no_file).unwrap_err();
        assert!(e.contains("verify_pattern only"), "{e}");
        let e = Pattern::parse("'x'", Formats::Offset, &no_file).unwrap_err();
        assert!(e.contains("cannot read the pattern file 'x'"), "{e}");
        // Not "'' is a directory" (the current one, opened): no name.
        let e = Pattern::parse("''", Formats::Offset, &no_file).unwrap_err();
        assert!(e.contains("'' names no file"), "{e}");
    }

    #[test]
    fn a_file_pattern_is_the_files_bytes() {
        let read = |p: &Path| -> Result<Vec<u8>, String> {
            assert_eq!(p, Path::new("t0027.pattern"));
            Ok(vec![1, 2, 3])
        };
        let got = Pattern::parse("'t0027.pattern'0x04", Formats::None, &read).unwrap();
        assert_eq!(got.bytes(), [1, 2, 3, 4]);
    }

    #[test]
    fn fill_repeats_the_pattern_and_writes_the_offset() {
        let pat = Pattern::parse("0x0102%o", Formats::Offset, &no_file).unwrap();
        let mut buf = vec![0u8; 25];
        pat.fill(&mut buf, 0x1122_3344_5566_7788);
        let one = [1, 2, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11];
        assert_eq!(&buf[..10], one);
        assert_eq!(&buf[10..20], one);
        assert_eq!(&buf[20..], &one[..5]);
        assert!(pat.matches(&buf, 0x1122_3344_5566_7788));
        assert!(!pat.matches(&buf, 0x1000));
        // A block shorter than the pattern: as much of %o as fits.
        let mut short = vec![0u8; 5];
        pat.fill(&mut short, 0x1122_3344_5566_7788);
        assert_eq!(short, [1, 2, 0x88, 0x77, 0x66]);
        let plain = Pattern::parse("0xaa55", Formats::None, &no_file).unwrap();
        let mut b = vec![0u8; 7];
        plain.fill(&mut b, 9);
        assert_eq!(b, [0xaa, 0x55, 0xaa, 0x55, 0xaa, 0x55, 0xaa]);
        assert!(plain.matches(&b, 0));
        b[6] = 0;
        assert!(!plain.matches(&b, 0));
    }
}
