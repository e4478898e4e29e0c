//! fio's spellings, understood: when a command line does not parse and one
//! of its options is fio's (`--numjobs=2`, `--direct=1`, `--runtime=10`),
//! the one-line error says what stripebench calls it instead of "unexpected
//! argument". Nothing here accepts a fio spelling: an option whose meaning
//! would change quietly is worse than a refusal that names the right one.

/// What fio's option is called here: a spelling to use, given the value
/// typed (`None` when fio's option took none; a note may follow the
/// spelling in parentheses), or why there is none.
enum Says {
    /// The stripebench spelling for fio's value.
    Use(fn(Option<&str>) -> String),
    /// No equivalent: what stripebench does instead, or the nearest option.
    Instead(&'static str),
}

/// fio's options that stripebench spells otherwise, or does not have.
const FIO: &[(&str, Says)] = &[
    ("numjobs", Says::Use(|v| format!("--jobs {} --jobs-share", v.unwrap_or("N")))),
    ("runtime", Says::Use(|v| format!("-t {}", seconds(v)))),
    ("ramp_time", Says::Use(|v| format!("--ramp {}", seconds(v)))),
    (
        "filename",
        Says::Use(|v| {
            let t = v.map_or("TARGET...".to_string(), |v| v.replace(':', " "));
            format!("{t} (the targets, as arguments)")
        }),
    ),
    ("cpus_allowed", Says::Use(|v| format!("--cpus {}", v.unwrap_or("LIST")))),
    (
        "cpus_allowed_policy",
        Says::Instead("stripebench pins each worker to its own CPU of --cpus (fio's policy=split)"),
    ),
    ("rwmixread", Says::Use(|v| format!("--mix {}", v.unwrap_or("PCT")))),
    (
        "random_distribution",
        Says::Use(|v| format!("--dist {}", v.unwrap_or("DIST"))),
    ),
    (
        "offset_increment",
        Says::Use(|v| format!("--offset-increment {}", v.unwrap_or("SIZE"))),
    ),
    (
        "rwmixwrite",
        Says::Use(|v| match v.and_then(|v| v.parse::<u8>().ok()).filter(|p| *p <= 100) {
            Some(p) => format!("--mix {} (the read share)", 100 - p),
            None => "--mix PCT (the read share)".to_string(),
        }),
    ),
    ("ioengine", Says::Use(engine)),
    ("rate_iops", Says::Use(|v| format!("--rate-iops {}", v.unwrap_or("N")))),
    (
        "buffer_compress_percentage",
        Says::Use(|v| format!("--buffer-compress {}", v.unwrap_or("PCT"))),
    ),
    ("dedupe_percentage", Says::Use(|v| format!("--dedupe {}", v.unwrap_or("PCT")))),
    ("io_size", Says::Use(|v| format!("--io-limit {}", v.unwrap_or("SIZE")))),
    ("io_limit", Says::Use(|v| format!("--io-limit {}", v.unwrap_or("SIZE")))),
    ("loops", Says::Use(|v| format!("--passes {}", v.unwrap_or("N")))),
    ("randseed", Says::Use(|v| format!("--seed {}", v.unwrap_or("N")))),
    (
        "output-format",
        Says::Instead("stripebench writes each format to its own path: --json PATH, --csv PATH, --html PATH (- for stdout)"),
    ),
    (
        "output",
        Says::Instead("stripebench writes each format to its own path: --json PATH, --csv PATH, --html PATH"),
    ),
    (
        "time_based",
        Says::Instead("every stripebench run is time based: -t TIME (or --io-limit SIZE to stop by bytes)"),
    ),
    (
        "group_reporting",
        Says::Instead("stripebench always reports every worker and the total"),
    ),
    // fio's latency-target search (io_u.c lat_target_*); times without
    // a unit are microseconds in fio.
    ("latency_target", Says::Use(|v| format!("--latency-target {}", micros(v)))),
    ("latency_window", Says::Use(|v| format!("--latency-window {}", micros(v)))),
    (
        "latency_percentile",
        Says::Use(|v| format!("--latency-percentile {}", v.unwrap_or("P"))),
    ),
    ("latency_run", Says::Use(|_| "--latency-run".to_string())),

    (
        "thread",
        Says::Instead("stripebench's workers are always threads, one pinned per target and job"),
    ),
    ("name", Says::Instead("stripebench has no job names: a run is one job; `sweep` runs several")),
    (
        "norandommap",
        Says::Instead("stripebench draws random offsets afresh (fio's norandommap randrepeat=0); --seed N repeats a draw"),
    ),
    (
        "randrepeat",
        Says::Instead("stripebench draws random offsets afresh each run; --seed N repeats a draw"),
    ),
    (
        "iodepth_batch",
        Says::Instead("stripebench submits as completions free slots; the nearest option is --iodepth N"),
    ),
    (
        "iodepth_batch_submit",
        Says::Instead("stripebench submits as completions free slots; the nearest option is --iodepth N"),
    ),
    (
        "iodepth_batch_complete",
        Says::Instead("stripebench reaps every completion there is; the nearest option is --iodepth N"),
    ),
    (
        "fsync",
        Says::Instead("stripebench does not fsync every N writes; buffered writes end with one timed fsync, reported apart"),
    ),
    (
        "end_fsync",
        Says::Instead("buffered writes always end with a timed fsync, reported apart"),
    ),
    (
        "invalidate",
        Says::Instead("stripebench evicts the targets' pages before buffered reads; --drop-caches drops all caches, --cached measures cached reads"),
    ),
    (
        "zero_buffers",
        Says::Instead("stripebench writes unique data; --buffer-compress PCT and --dedupe PCT make it compressible or duplicated"),
    ),
    (
        "refill_buffers",
        Says::Instead("stripebench writes unique data in every block already"),
    ),
    (
        "allow_mounted_write",
        Says::Instead("stripebench never writes to a mounted device; --allow-destructive consents to writes on an unmounted one"),
    ),
    ("startdelay", Says::Use(|v| format!("--start-delay {}", seconds(v)))),
    ("number_ios", Says::Use(|v| format!("--ios {}", v.unwrap_or("N")))),
];

/// fio's runtime and ramp_time are seconds when the value has no unit.
fn micros(v: Option<&str>) -> String {
    match v {
        Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => format!("{v}us"),
        Some(v) => v.to_string(),
        None => "TIME".to_string(),
    }
}

fn seconds(v: Option<&str>) -> String {
    match v {
        Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => format!("{v}s"),
        Some(v) => v.to_string(),
        None => "TIME".to_string(),
    }
}

fn engine(v: Option<&str>) -> String {
    match v {
        Some("io_uring") => "--engine uring".to_string(),
        Some("psync" | "sync" | "pvsync" | "pvsync2") => "--engine sync".to_string(),
        Some("libaio") => {
            "--engine uring (stripebench has no libaio engine; io_uring is the nearest)".to_string()
        }
        Some(other) => format!(
            "--engine auto|sync|uring (it has no {} engine)",
            crate::base::error::show_text(other)
        ),
        None => "--engine auto|sync|uring".to_string(),
    }
}

/// The hint for the first fio spelling in `args` (the command line after
/// the program name, up to a bare `--`), or `None` when it has none.
pub fn hint(args: &[String]) -> Option<String> {
    let mut it = args.iter().take_while(|a| a.as_str() != "--").peekable();
    while let Some(a) = it.next() {
        let Some(opt) = a.strip_prefix("--") else {
            continue;
        };
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (opt, None),
        };
        if let Some(said) = shared(&crate::base::error::show_text(a), name, value) {
            return Some(said);
        }
        let Some((_, says)) = FIO.iter().find(|(n, _)| *n == name) else {
            continue;
        };
        // `--numjobs 2`: the value is the next word, unless it is an option.
        let value = value.or_else(|| match says {
            Says::Use(_) => it
                .peek()
                .filter(|v| !v.starts_with('-'))
                .map(|v| v.as_str()),
            Says::Instead(_) => None,
        });
        let fio = match value {
            Some(v) => format!("--{name}={v}"),
            None => format!("--{name}"),
        };
        return explain(&fio, name, value);
    }
    None
}

/// What stripebench says to fio's option `name` with `value`, as one
/// clause about `fio` (the option as the user wrote it: `--numjobs=2` on a
/// command line, `numjobs=2` in a job file): "`fio` is fio's: stripebench
/// says `--jobs 2`", or "`fio` is fio's and has no equivalent: why".
/// `None` when this table does not know the option. Everything typed is
/// shown escaped.
pub fn explain(fio: &str, name: &str, value: Option<&str>) -> Option<String> {
    let fio = crate::base::error::show_text(fio);
    if let Some(said) = shared(&fio, name, value) {
        return Some(said);
    }
    let (_, says) = FIO.iter().find(|(n, _)| *n == name)?;
    // What was typed is shown escaped, in the spelling too.
    let value = value.map(|v| crate::base::error::show_text(v).into_owned());
    let value = value.as_deref();
    Some(match says {
        Says::Use(f) => {
            // The spelling in backticks, a note after it in parentheses.
            let said = f(value);
            match said.split_once(" (") {
                Some((spell, note)) => {
                    format!("`{fio}` is fio's: stripebench says `{spell}` ({note}")
                }
                None => format!("`{fio}` is fio's: stripebench says `{said}`"),
            }
        }
        Says::Instead(why) => format!("`{fio}` is fio's and has no equivalent: {why}"),
    })
}

/// The stripebench spelling of fio's option `name` with `value` (words as
/// typed, such as `--jobs 2`), without its note; `None` when the table has
/// no spelling for it. A job file's options are translated with these.
pub fn spelling(name: &str, value: &str) -> Option<String> {
    match FIO.iter().find(|(n, _)| *n == name)? {
        (_, Says::Use(f)) => {
            let said = f(Some(value));
            Some(
                said.split_once(" (")
                    .map_or(said.clone(), |(s, _)| s.to_string()),
            )
        }
        (_, Says::Instead(_)) => None,
    }
}

/// Options both tools have, with fio's values (`fio` already shown).
fn shared(fio: &str, name: &str, value: Option<&str>) -> Option<String> {
    Some(match (name, value) {
        ("direct", Some("1")) | ("buffered", Some("0")) => {
            format!("`{fio}` is fio's: stripebench says `--direct` (its default)")
        }
        ("direct", Some("0")) | ("buffered", Some("1")) => {
            format!("`{fio}` is fio's: stripebench says `--buffered`")
        }
        ("verify", Some(_)) => format!(
            "`{fio}` is fio's: stripebench says `--verify` (with --rw write: it writes blocks that name their place and checks them; `stripebench verify` reads them back later)"
        ),
        // fio's offset modifier: a skip on a sequential pattern, I/Os per
        // random offset on a random one.
        ("rw" | "readwrite", Some(v)) if v.contains(':') => {
            let (p, m) = v.split_once(':').unwrap_or((v, ""));
            let option = if p.starts_with("rand") { "--seq-run" } else { "--skip" };
            format!(
                "`{fio}` is fio's: stripebench says `--rw {} {option} {}`",
                crate::base::error::show_text(p),
                crate::base::error::show_text(m)
            )
        }
        ("rw" | "readwrite", Some("readwrite")) => {
            format!("`{fio}` is fio's: stripebench says `--rw rw --mix PCT`")
        }
        ("readwrite", Some(v)) => format!(
            "`{fio}` is fio's: stripebench says `--rw {}`",
            crate::base::error::show_text(v)
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 41 (latency-profile.fio): fio's latency target typed on run's
    // line gets run's spelling, its unitless times read as fio's
    // microseconds.
    #[test]
    fn a_latency_target_is_spelled_as_run_spells_it() {
        let said = |k: &str, v: &str| explain(&format!("{k}={v}"), k, Some(v)).unwrap_or_default();
        assert!(said("latency_target", "500000").contains("--latency-target 500000us"));
        assert!(said("latency_window", "5s").contains("--latency-window 5s"));
        assert!(said("latency_percentile", "99.9").contains("--latency-percentile 99.9"));
    }

    fn h(line: &str) -> Option<String> {
        hint(&line.split(' ').map(String::from).collect::<Vec<_>>())
    }

    // Issue 41: fio's distribution, offset modifiers and offset_increment
    // typed on run's line get run's spelling.
    #[test]
    fn fio_s_access_options_get_run_s_spelling() {
        for (line, says) in [
            ("run --rw=read:512k", "`--rw read --skip 512k`"),
            ("run --rw=randread:8", "`--rw randread --seq-run 8`"),
            ("run --random_distribution=zipf:1.2", "`--dist zipf:1.2`"),
            ("run --offset_increment=1g", "`--offset-increment 1g`"),
        ] {
            let h = h(line).unwrap_or_default();
            assert!(h.contains(says), "{line}: {h}");
        }
    }

    #[test]
    fn fio_spellings_get_the_stripebench_spelling() {
        assert_eq!(
            h("run --numjobs=2 /dev/loop0").as_deref(),
            Some("`--numjobs=2` is fio's: stripebench says `--jobs 2 --jobs-share`")
        );
        assert_eq!(
            h("run --numjobs 4").as_deref(),
            Some("`--numjobs=4` is fio's: stripebench says `--jobs 4 --jobs-share`")
        );
        assert_eq!(
            h("run --direct=1").as_deref(),
            Some("`--direct=1` is fio's: stripebench says `--direct` (its default)")
        );
        assert!(h("run --direct=0").unwrap().ends_with("says `--buffered`"));
        assert!(h("run --runtime=10").unwrap().ends_with("says `-t 10s`"));
        assert!(h("run --runtime=2m").unwrap().ends_with("says `-t 2m`"));
        assert!(h("run --ramp_time=5")
            .unwrap()
            .ends_with("says `--ramp 5s`"));
        assert!(h("run --filename=/dev/a:/dev/b")
            .unwrap()
            .ends_with("says `/dev/a /dev/b` (the targets, as arguments)"));
        assert!(h("run --cpus_allowed=0-3")
            .unwrap()
            .ends_with("`--cpus 0-3`"));
        assert!(h("run --rwmixread=70").unwrap().ends_with("`--mix 70`"));
        assert!(h("run --rwmixwrite=30")
            .unwrap()
            .ends_with("`--mix 70` (the read share)"));
        assert!(h("run --ioengine=io_uring")
            .unwrap()
            .ends_with("`--engine uring`"));
        assert!(h("run --ioengine=psync")
            .unwrap()
            .ends_with("`--engine sync`"));
        assert!(h("run --ioengine=libaio")
            .unwrap()
            .contains("io_uring is the nearest"));
        assert!(h("run --rate_iops=100")
            .unwrap()
            .ends_with("`--rate-iops 100`"));
        assert!(h("run --buffer_compress_percentage=50")
            .unwrap()
            .ends_with("`--buffer-compress 50`"));
        assert!(h("run --verify=crc32c")
            .unwrap()
            .contains("says `--verify`"));
    }

    #[test]
    fn fio_options_without_an_equivalent_say_so_and_name_the_nearest() {
        let t = h("run --time_based").unwrap();
        assert!(
            t.starts_with("`--time_based` is fio's and has no equivalent"),
            "{t}"
        );
        assert!(t.contains("-t TIME"), "{t}");
        assert!(h("run --iodepth_batch=8").unwrap().contains("--iodepth N"));
        assert!(h("run --rw=readwrite").unwrap().contains("--rw rw"));
    }

    #[test]
    fn stripebench_spellings_and_what_follows_a_bare_dash_dash_get_none() {
        assert_eq!(h("run --jobs 2 --direct --size=1g --rate=50m /dev/a"), None);
        assert_eq!(h("run --bogus"), None);
        assert_eq!(h("run -- --numjobs=2"), None);
    }

    #[test]
    fn control_characters_in_the_hint_are_escaped() {
        let t = h("run --numjobs=2\x1b[31m").unwrap();
        assert!(!t.contains('\x1b'), "{t}");
    }
}
