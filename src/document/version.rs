//! A host's answer to `stripebench version --json` (one line: its
//! version, schema version and clock), as a fleet's launcher reads it back
//! (`version --read-answers`), and what makes a line no answer.

/// One host's answer, as `version --json` writes it.
#[derive(Debug, serde::Deserialize)]
pub struct Answer {
    pub version: String,
    pub schema_version: u32,
    pub clock_unix_ns: u64,
}

/// The longest answer line read: `print`'s are under 100 bytes.
pub const ANSWER_MAX: usize = 4096;

/// What is wrong with LINE as an answer, quoted (escaped, cut) when it is
/// the line's own text.
pub fn check_answer(line: &[u8]) -> Result<Answer, String> {
    let shown = |b: &[u8]| {
        let s = String::from_utf8_lossy(&b[..b.len().min(80)]).into_owned();
        let cut = if b.len() > 80 { "..." } else { "" };
        format!("{s:?}{cut}")
    };
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.len() > ANSWER_MAX {
        return Err(format!("longer than {ANSWER_MAX} bytes: {}", shown(text)));
    }
    let a: Answer = serde_json::from_slice(text).map_err(|e| format!("{e}: {}", shown(text)))?;
    let good = |c: char| c.is_ascii_alphanumeric() || ".+~-".contains(c);
    if a.version.is_empty() || a.version.len() > 64 || !a.version.chars().all(good) {
        return Err(format!(
            "version {} is not a version",
            shown(a.version.as_bytes())
        ));
    }
    // A launcher's shell reads the clock as a signed 64-bit number.
    if a.clock_unix_ns > i64::MAX as u64 {
        return Err(format!("clock_unix_ns {} is not a clock", a.clock_unix_ns));
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_that_are_not_ones_are_refused_with_their_text_escaped() {
        let ok =
            check_answer(b"{\"version\":\"0.1.0\",\"schema_version\":1,\"clock_unix_ns\":7}\n")
                .unwrap();
        assert_eq!(
            (ok.version.as_str(), ok.schema_version, ok.clock_unix_ns),
            ("0.1.0", 1, 7)
        );
        for bad in [
            &b"{\"version\":\"0.1.0\",\"schema_version\":1,\"clock_unix_ns\":t0[$(date)]}"[..],
            b"{\"version\":\"$(date)\",\"schema_version\":1,\"clock_unix_ns\":7}",
            b"{\"version\":\"0 1\",\"schema_version\":1,\"clock_unix_ns\":7}",
            b"{\"version\":\"0.1\",\"schema_version\":1,\"clock_unix_ns\":18446744073709551615}",
            b"\x1b]0;x\x07",
        ] {
            let e = check_answer(bad).unwrap_err();
            assert!(!e.chars().any(char::is_control), "{e:?}");
        }
        assert!(check_answer(&[b'x'; 5000])
            .unwrap_err()
            .contains("longer than"));
    }
}
