//! `stripebench version`: the version, the schema version and the clock, for
//! a fleet's preflight (scripts/fleet.sh asks every host before any starts);
//! and the launcher's side: the hosts' answers read and checked.

use std::io::{BufRead, Read};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use crate::base::error::EXIT_OK;
use crate::cli::VersionArgs;
use crate::document::run::{ToolInfo, SCHEMA_VERSION};
use crate::document::version::{check_answer, ANSWER_MAX};

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
