//! Units: parsing sizes and durations from the command line, and formatting
//! byte rates and latencies for people.
//!
//! One rule for rates and one for sizes, so that "MB" never means two
//! things (the top-level `--help` prints it): a rate's MB/s is 10^6 bytes per second (as `dd`
//! prints) and its MiB/s 2^20; a size's `k`, `m`, `g`, `t` and `KiB`, `MiB`,
//! ... are binary (`4k` = 4096 bytes), and a size written `KB`, `MB`, `GB`,
//! `TB`, which the rate rule would read as decimal, is refused as ambiguous.
//! Rates are printed in MB/s *and* MiB/s, always labelled.

use std::time::Duration;

/// Parses a size such as `4096`, `4k`, `1m`, `3M`, `2g`, `1t`, `64KiB`.
/// Suffixes are binary (k = 1024); `KB`, `MB`, `GB`, `TB` are refused, since
/// in a rate they are decimal. Fractions and negative numbers are refused.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty size: give a number such as 4096, 4k, 1m or 2g".into());
    }
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits_end);
    if num.is_empty() {
        return Err(format!(
            "'{text}' is not a size: give a whole number with an optional suffix k, m, g or t (binary), such as 4k"
        ));
    }
    let mult: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" | "mb" | "gb" | "tb" => {
            let short = &suffix[..1].to_ascii_lowercase();
            return Err(format!(
                "'{text}' is ambiguous: {suffix} is decimal in a rate (MB/s = 10^6 bytes/s) but sizes are binary: write {num}{short} or {num}{}iB ({num} x 2^{}), or the number of bytes",
                short.to_ascii_uppercase(),
                match short.as_str() { "k" => 10, "m" => 20, "g" => 30, _ => 40 }
            ));
        }
        _ => {
            return Err(format!(
            "'{text}' has an unknown suffix '{suffix}': use k, m, g or t (binary: 1k = 1024 bytes)"
        ))
        }
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{text}' is too large to be a size in bytes"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{text}' is too large to be a size in bytes"))
}

/// Parses a duration such as `10s`, `500ms`, `1.5s`, `2m`, `1h`, `250us`, or a
/// bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration: give a time such as 10s, 500ms or 2m".into());
    }
    let num_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(num_end);
    let value: f64 = num.parse().map_err(|_| {
        format!(
            "'{text}' is not a duration: give a number with a unit s, ms, us, m or h, such as 10s"
        )
    })?;
    let secs_per_unit = match unit {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "'{text}' has an unknown unit '{unit}': use ns, us, ms, s, m or h"
            ))
        }
    };
    let secs = value * secs_per_unit;
    // A benchmark longer than a year is a typo, and keeps the arithmetic in range.
    if !secs.is_finite() || secs > 365.0 * 86400.0 {
        return Err(format!("'{text}' is too long: give at most a year"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The proleptic Gregorian (year, month, day) of `days` since 1970-01-01
/// (Howard Hinnant's civil_from_days).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Formats a latency given in nanoseconds with a unit chosen for readability.
pub fn fmt_latency_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0}ns")
    } else if ns < 1_000_000.0 {
        format!("{:.1}us", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.3}s", ns / 1e9)
    }
}

/// A share such as an over-provisioning fraction, as it reads back
/// (Rust's shortest round-trip form), in exponent form below 1e-4 so
/// that 1e-300 is not printed with 300 digits; both parse back as the
/// same value, for fio's strtod as for ours.
pub fn fmt_share(x: f64) -> String {
    if x != 0.0 && x.abs() < 1e-4 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Formats a byte count with a binary unit, for messages.
pub fn fmt_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// Formats a size the way `--bs` accepts it back (`4k`, `1m`, or bytes).
pub fn fmt_size_arg(bytes: u64) -> String {
    for (shift, s) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{s}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// Bytes per second → MB/s (10^6).
pub fn mb_per_sec(bytes_per_sec: f64) -> f64 {
    bytes_per_sec / 1e6
}

/// Bytes per second → MiB/s (2^20).
pub fn mib_per_sec(bytes_per_sec: f64) -> f64 {
    bytes_per_sec / (1u64 << 20) as f64
}

/// Parses a target rate: "20GB/s", "500MB/s" (decimal), "2GiB/s" (binary),
/// or bytes per second: the units rule of `crate::base::units`. A unit without
/// its B ("5G/s"), or in lower case ("5gb/s", which reads as bits), is
/// refused rather than guessed.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let body = t.strip_suffix("/s").unwrap_or(t);
    let split = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (num, unit) = body.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a rate: write 20GB/s, 500MB/s or 2GiB/s"))?;
    let m = match unit.trim() {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1048576.0,
        "GiB" => 1073741824.0,
        "TiB" => 1099511627776.0,
        u => return Err(format!("'{text}': unknown unit '{u}' in a rate: write B/s, KB/s, MB/s, GB/s, TB/s (decimal: 1 MB/s = 10^6 bytes/s) or KiB/s, MiB/s, GiB/s, TiB/s (binary: 1 MiB/s = 2^20 bytes/s)")),
    };
    if !(v * m).is_finite() {
        return Err(format!("'{text}' is too large a rate"));
    }
    if v <= 0.0 {
        return Err(format!("'{text}': the rate must be positive"));
    }
    Ok(v * m)
}

/// Parses a worker's rate limit (`--rate`): a size per second, binary as
/// every size (`50m/s` = 50 MiB/s, `4k/s`, `1g/s`), or a rate with its
/// byte unit as [`parse_rate`] reads it (`500MB/s` decimal, `2GiB/s`
/// binary). Zero and rates beyond 10^18 bytes per second are refused.
pub fn parse_io_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let body = t.strip_suffix("/s").unwrap_or(t);
    let zero = body
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .trim();
    if !zero.is_empty() && zero.chars().all(|c| c == '0' || c == '.') {
        return Err(format!(
            "'{text}': a rate of 0 would never issue an I/O: give a positive rate such as 50m/s, or leave the rate out"
        ));
    }
    let v = match parse_size(body) {
        Ok(n) => n as f64,
        Err(size_err) => match parse_rate(t) {
            Ok(v) => v,
            // A size's message for a size-looking text ("1.5m", "4x"), the
            // rate's for a rate-looking one ("5XB/s").
            Err(_) if !body.ends_with('B') => {
                return Err(format!(
                    "{size_err}; a rate is SIZE/s such as 50m/s (binary) or 500MB/s (decimal)"
                ))
            }
            Err(e) => return Err(e),
        },
    };
    if !(v.is_finite() && v <= 1e18) {
        return Err(format!(
            "'{text}' is too large a rate: give at most 10^18 bytes per second"
        ));
    }
    Ok(v)
}

/// Parses a rate in I/Os per second (`--rate-iops`): at least 1, at most
/// 10^9 (an interval of 1 ns).
pub fn parse_iops(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(0.0) => Err(format!(
            "'{text}': a rate of 0 would never issue an I/O: give at least 1 I/O per second, or leave the rate out"
        )),
        Ok(n) if n.is_finite() && n > 0.0 && n < 1.0 => Err(format!(
            "'{text}' is below one I/O per second: give at least 1"
        )),
        Ok(n) if n.is_finite() && n > 1e9 => Err(format!(
            "'{text}' is more than 10^9 I/Os per second: the interval between two I/Os would be below 1 ns"
        )),
        Ok(n) if n.is_finite() && n >= 1.0 => Ok(n),
        _ => Err(format!(
            "'{text}' is not a rate: give I/Os per second per worker, such as 200"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("64KiB").unwrap(), 65536);
        assert_eq!(parse_size("3M").unwrap(), 3 << 20);
        assert_eq!(parse_size("2g").unwrap(), 2 << 30);
        assert_eq!(parse_size("1t").unwrap(), 1 << 40);
        assert_eq!(parse_size(" 8k ").unwrap(), 8192);
    }

    #[test]
    fn bad_sizes_are_refused_with_a_reason() {
        for bad in [
            "",
            "k",
            "-4k",
            "1.5m",
            "4x",
            "abc",
            "99999999999999999999",
            "16777216t",
        ] {
            let e = parse_size(bad).unwrap_err();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(parse_size("4x").unwrap_err().contains("suffix"));
        assert!(parse_size("16777216t").unwrap_err().contains("too large"));
    }

    // Regression (issue 13, item 8): a size's "1MB" was 2^20 bytes while a
    // rate's "1MB/s" is 10^6: one spelling, two meanings.
    #[test]
    fn sizes_written_in_decimal_units_are_refused_as_ambiguous() {
        for bad in ["1MB", "1mb", "64KB", "64kB", "2GB", "1TB", "1Mb"] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.contains("ambiguous"), "{bad}: {e}");
        }
        let e = parse_size("64KB").unwrap_err();
        assert!(e.contains("64k or 64KiB"), "{e}");
        assert_eq!(parse_size("1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_size("1TiB").unwrap(), 1 << 40);
        assert_eq!(parse_size("512B").unwrap(), 512);
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
    }

    #[test]
    fn bad_durations_are_refused() {
        for bad in ["", "s", "-1s", "10x", "1..2s", "9999999999h", "nan"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_latency_ns(512.0), "512ns");
        assert_eq!(fmt_latency_ns(4_560.0), "4.6us");
        assert_eq!(fmt_latency_ns(1_234_000.0), "1.23ms");
        assert_eq!(fmt_latency_ns(2_500_000_000.0), "2.500s");
        assert_eq!(fmt_size_arg(4096), "4k");
        assert_eq!(fmt_size_arg(3 << 20), "3m");
        assert_eq!(fmt_size_arg(1536), "1536");
        assert_eq!(fmt_bytes(1536), "1.5 KiB");
        assert!((mb_per_sec(2e6) - 2.0).abs() < 1e-12);
        assert!((mib_per_sec(1048576.0) - 1.0).abs() < 1e-12);
    }
}

#[cfg(test)]
mod property_tests {
    use super::*;
    use crate::base::cpus::parse_cpu_list;
    use crate::base::io::Rng;

    /// Random strings over the characters these parsers care about (and some
    /// they must refuse): none may panic, every refusal must say something,
    /// and every size accepted must round-trip through its own formatting.
    #[test]
    fn parsers_never_panic_on_random_input() {
        const ALPHABET: &[u8] = b"0123456789kmgtKMGTiBb.-,: sxnuh\n\t\xc2\xb5";
        let mut rng = Rng::new(2026);
        for _ in 0..200_000 {
            let len = rng.below(14) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize])
                .collect();
            let text = String::from_utf8_lossy(&bytes);
            match parse_size(&text) {
                Ok(n) => assert_eq!(parse_size(&fmt_size_arg(n)), Ok(n), "{text:?}"),
                Err(e) => assert!(!e.is_empty(), "{text:?}"),
            }
            if let Err(e) = parse_duration(&text) {
                assert!(!e.is_empty(), "{text:?}");
            }
            match parse_cpu_list(&text) {
                Ok(cpus) => assert!(!cpus.is_empty(), "{text:?}"),
                Err(e) => assert!(!e.is_empty(), "{text:?}"),
            }
        }
    }

    #[test]
    fn rates_parse_with_units() {
        assert_eq!(parse_rate("20GB/s").unwrap(), 20e9);
        assert_eq!(parse_rate("500MB/s").unwrap(), 500e6);
        assert_eq!(parse_rate("2GiB/s").unwrap(), 2.0 * 1073741824.0);
        assert_eq!(parse_rate("1000").unwrap(), 1000.0);
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("5XB/s").is_err());
        assert!(parse_rate("-1GB/s").is_err());
    }

    // Regression (issue 13, item 8): rates are decimal in MB/s, binary in
    // MiB/s, and a unit that could be either is refused, not guessed.
    #[test]
    fn rates_are_decimal_in_mb_and_binary_in_mib() {
        assert_eq!(parse_rate("1MB/s").unwrap(), 1e6);
        assert_eq!(parse_io_rate("50m/s").unwrap(), 50.0 * 1048576.0);
        assert_eq!(parse_io_rate("4k/s").unwrap(), 4096.0);
        assert_eq!(parse_io_rate("500MB/s").unwrap(), 500e6);
        assert_eq!(parse_io_rate("2GiB/s").unwrap(), 2.0 * 1073741824.0);
        for zero in ["0", "0/s", "0m/s", "0MB/s", "0.0MB/s"] {
            assert!(
                parse_io_rate(zero).unwrap_err().contains("rate of 0"),
                "{zero}"
            );
        }
        assert!(parse_io_rate("fast").is_err());
        assert!(parse_io_rate("1.5m/s").is_err());
        assert!(parse_io_rate(&format!("{}GB/s", "9".repeat(400)))
            .unwrap_err()
            .contains("too large"));
        assert_eq!(parse_rate("1MiB/s").unwrap(), 1048576.0);
        assert_eq!(parse_rate("1.5GB/s").unwrap(), 1.5e9);
        assert_eq!(parse_rate("1KB/s").unwrap(), 1e3);
        assert_eq!(parse_rate("1kB/s").unwrap(), 1e3);
        assert_eq!(parse_rate("1TiB/s").unwrap(), 1099511627776.0);
        for bad in ["5G/s", "5g/s", "5gb/s", "5Gb/s", "5m", "5GIB/s"] {
            let e = parse_rate(bad).unwrap_err();
            assert!(
                e.contains("MB/s = 10^6") && e.contains("MiB/s = 2^20"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_tiny_share_is_printed_in_exponent_form() {
        assert_eq!(fmt_share(0.15), "0.15");
        assert_eq!(fmt_share(1e-300), "1e-300");
        assert_eq!(fmt_share(1e-300).parse::<f64>().unwrap(), 1e-300);
        assert_eq!(fmt_share(0.0), "0");
    }
}
