//! `stripebench version`: the version, the schema version and the clock, for
//! a fleet's preflight (scripts/fleet.sh asks every host before any starts);
//! and the launcher's side: the hosts' answers read and checked.

use std::io::{BufRead, Read};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use crate::base::error::EXIT_OK;
use crate::cli::VersionArgs;
use crate::document::run::{ToolInfo, SCHEMA_VERSION};

pub fn run(args: &VersionArgs) -> Result<u8> {
    if args.read_answers {
        return read_answers();
    }
    print(args.json);
    if args.on_stdin {
        // Each line is the launcher's "now": the clock is read when it
        // arrives. Lines are counted, never kept: any bytes, any length.
        let mut stdin = std::io::stdin().lock();
        let mut partial = false;
        loop {
            let buf = stdin
                .fill_buf()
                .context("--on-stdin: cannot read standard input")?;
            if buf.is_empty() {
                if partial {
                    print(args.json);
                }
                break;
            }
            let n = buf.len();
            for &b in buf {
                partial = b != b'\n';
                if !partial {
                    print(args.json);
                }
            }
            stdin.consume(n);
        }
    }
    Ok(EXIT_OK)
}

fn print(json: bool) {
    // A clock before 1970 is a broken clock; it shows as 0, which any
    // preflight refuses as skewed.
    let clock_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tool = ToolInfo::this();
    if json {
        let line = serde_json::json!({
            "version": tool.version,
            "schema_version": SCHEMA_VERSION,
            "clock_unix_ns": clock_ns as u64,
        });
        crate::outln!("{line}");
    } else {
        crate::outln!(
            "{} {} (JSON schema version {SCHEMA_VERSION}); clock {} ({}.{:09} Unix s)",
            tool.name,
            tool.version,
            humantime::format_rfc3339_nanos(
                UNIX_EPOCH + std::time::Duration::from_nanos(clock_ns as u64)
            ),
            clock_ns / 1_000_000_000,
            clock_ns % 1_000_000_000
        );
    }
}

/// One host's answer, as `print` writes it.
#[derive(Debug, serde::Deserialize)]
struct Answer {
    version: String,
    schema_version: u32,
    clock_unix_ns: u64,
}

/// The longest answer line read: `print`'s are under 100 bytes.
const ANSWER_MAX: usize = 4096;

/// `--read-answers`: each line of standard input checked to be an answer,
/// printed as "VERSION SCHEMA_VERSION CLOCK_UNIX_NS" (words a shell can use
/// as they are: no quote, no space, no control character).
fn read_answers() -> Result<u8> {
    let mut stdin = std::io::stdin().lock();
    let mut n = 0;
    loop {
        let mut line = Vec::new();
        let got = (&mut stdin)
            .take(ANSWER_MAX as u64 + 1)
            .read_until(b'\n', &mut line)
            .context("--read-answers: cannot read standard input")?;
        if got == 0 {
            return Ok(EXIT_OK);
        }
        n += 1;
        let a = check_answer(&line).map_err(|why| {
            crate::base::error::UsageError(format!(
                "--read-answers: line {n} is not an answer of stripebench version --json: {why}"
            ))
        })?;
        crate::outln!("{} {} {}", a.version, a.schema_version, a.clock_unix_ns);
    }
}

/// What is wrong with LINE as an answer, quoted (escaped, cut) when it is
/// the line's own text.
fn check_answer(line: &[u8]) -> Result<Answer, String> {
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
