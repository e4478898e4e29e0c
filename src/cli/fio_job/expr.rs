//! What fio evaluates in a job file's values, evaluated as fio does by a
//! small parser of our own: no shell, no `bc`, no command.
//!
//! fio (options.c, `dup_and_sub_options`) does three things to a value
//! before it reads it, in this order, and stripebench does the same:
//!
//! 1. `${NAME}` becomes the environment variable NAME (fio substitutes the
//!    empty string for an unset one; stripebench refuses it by name, as a
//!    run sized by an empty string is a typo, not a plan). A bare `$NAME`
//!    is not the environment in fio: it stays text, so it is refused here
//!    unless it is one of fio's words.
//! 2. `$pagesize`, `$mb_memory` and `$ncpus` become this host's page size,
//!    MiB of memory (MemTotal) and online CPUs. fio's file-name words
//!    (`$jobnum`, `$filenum`, `$jobname`, `$clientuid`) stay as text for
//!    the option that reads them.
//! 3. Arithmetic: where a word of step 2 was replaced and the value holds
//!    `+ - * /`, fio pipes it to `bc` (integers: `size=8*$mb_memory`);
//!    else a value that starts with `(` is fio's expression grammar
//!    (exp/expression-parser.y: `+ - * / % ^`, parentheses, units inside,
//!    `(5*1024*1024)`, `(4k*3)`), read in the option's kind: bytes, or a
//!    time (microseconds unless a unit says otherwise).
//!
//! `$(...)` and backticks are command substitution in a shell; fio runs
//! none and neither does stripebench: refused by name. Everything is
//! bounded (the value's length, substitutions, nesting) and an overflow,
//! a division by zero or a result fio would truncate is refused with one
//! line, never wrapped.

/// The longest value evaluated, before and after substitution: fio's
/// own examples are under 100 characters (its `bc` step takes 100).
pub const MAX_VALUE: usize = 1024;

/// The most `${NAME}` and `$word` substitutions in one value.
pub const MAX_SUBSTITUTIONS: usize = 16;

/// The deepest nesting of parentheses and unary minus in an expression.
pub const MAX_DEPTH: usize = 32;

/// One of fio's reserved words, with this host's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyword {
    PageSize,
    MbMemory,
    Ncpus,
}

impl Keyword {
    const ALL: [(Keyword, &'static str); 3] = [
        (Keyword::PageSize, "pagesize"),
        (Keyword::MbMemory, "mb_memory"),
        (Keyword::Ncpus, "ncpus"),
    ];

    fn said(self) -> &'static str {
        match self {
            Keyword::PageSize => "$pagesize: this host's page size",
            Keyword::MbMemory => "$mb_memory: this host's MemTotal in MiB",
            Keyword::Ncpus => "$ncpus: this host's online CPUs",
        }
    }
}

/// fio's file-name words, read by `filename_format` and kept as text.
const NAME_WORDS: [&str; 4] = ["jobnum", "filenum", "jobname", "clientuid"];

/// Where substituted values come from: the environment and the host,
/// passed in so that tests give their own.
pub struct Sources<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub host: &'a dyn Fn(Keyword) -> Option<u64>,
}

impl Sources<'static> {
    /// This process's environment and this host.
    pub const REAL: Sources<'static> = Sources {
        env: &real_env,
        host: &real_host,
    };
}

/// This process's environment, as fio reads it.
pub fn real_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// This host's value of a reserved word: the page size as the kernel gives
/// it, MemTotal in MiB (fio: physical pages times page size), the online
/// CPUs as sysfs lists them.
pub fn real_host(k: Keyword) -> Option<u64> {
    match k {
        Keyword::PageSize => Some(crate::device::queue::page_size()),
        Keyword::MbMemory => crate::device::cache::meminfo("MemTotal").map(|b| b >> 20),
        Keyword::Ncpus => crate::base::cpus::online_cpus(&crate::base::host::Host::real())
            .map(|c| c.len() as u64)
            .filter(|&n| n > 0),
    }
}

/// A value evaluated: the text that replaces it, and the `#` line that
/// says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluated {
    pub value: String,
    pub note: String,
}

/// How fio reads an option's number: the lexer's `m` (MiB or minutes) and
/// the unit a number without one has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Bytes or a count: `m` is MiB, no unit is 1.
    Number,
    /// fio's `is_seconds` times: microseconds inside, whole seconds out.
    Seconds,
    /// fio's other times: microseconds.
    Micros,
    /// Text fio never evaluates as arithmetic.
    Text,
}

fn kind(key: &str) -> Kind {
    match key {
        "runtime"
        | "startdelay"
        | "ramp_time"
        | "thinktime_iotime"
        | "ss_dur"
        | "steadystate_duration"
        | "ss_ramp"
        | "steadystate_ramp_time" => Kind::Seconds,
        "thinktime" | "thinktime_spin" | "max_latency" | "latency_target" | "latency_window" => {
            Kind::Micros
        }
        "filename"
        | "filename_format"
        | "directory"
        | "name"
        | "description"
        | "rw"
        | "ioengine"
        | "cpus_allowed"
        | "bssplit"
        | "random_distribution"
        | "verify"
        | "verify_pattern"
        | "write_bw_log"
        | "write_lat_log"
        | "write_iops_log"
        | "write_hist_log"
        | "opendir"
        | "ss"
        | "steadystate" => Kind::Text,
        _ => Kind::Number,
    }
}

/// `key=value` evaluated as fio would: `Ok(None)` when fio evaluates
/// nothing in it; `Err` is the line's reason, what to do included.
pub fn evaluate(key: &str, value: &str, src: &Sources) -> Result<Option<Evaluated>, String> {
    let shown = crate::base::error::show_text(value);
    let at = format!("`{key}={shown}`");
    if value.contains('`') || value.contains("$(") {
        return Err(format!(
            "{at}: `$(...)` and backticks are a shell's command substitution; fio runs none and stripebench runs no command: write the value itself"
        ));
    }
    if !value.contains('$') && !value.starts_with('(') {
        return Ok(None);
    }
    if value.len() > MAX_VALUE {
        return Err(format!(
            "`{key}=...`: a value of {} characters to evaluate, more than stripebench evaluates ({MAX_VALUE}): write the value itself",
            value.len()
        ));
    }
    let mut from: Vec<String> = Vec::new();
    let mut subs = 0usize;
    let text = environment(value, src, &at, &mut subs, &mut from)?;
    let (text, replaced) = keywords(&text, src, &at, &mut subs, &mut from)?;
    if text.len() > MAX_VALUE {
        return Err(format!(
            "{at}: {} characters once substituted, more than stripebench evaluates ({MAX_VALUE}): write the value itself",
            text.len()
        ));
    }
    let out = if replaced && text.contains(['+', '-', '*', '/']) && !text.contains('\'') {
        // fio's bc step: integers, bc's precedence.
        let n = Parser::new(&text, Grammar::Bc)
            .whole()
            .and_then(|v| v.int())
            .map_err(|e| {
                format!(
                    "{at}: fio hands `{}` to bc: {e}: write the value itself",
                    show(&text)
                )
            })?;
        from.push("integer arithmetic, as fio's bc step does it".into());
        non_negative(n, &at)?
    } else if text.starts_with('(') {
        arithmetic(key, &text, &at, &mut from)?
    } else {
        text
    };
    if out == value {
        // Only fio's file-name words: text for the option that reads them.
        return Ok(None);
    }
    Ok(Some(Evaluated {
        note: format!("{key}={shown} -> {} ({})", show(&out), from.join("; ")),
        value: out,
    }))
}

fn show(s: &str) -> String {
    crate::base::error::show_text(s).into_owned()
}

/// Step 1: each `${NAME}` from the environment.
fn environment(
    value: &str,
    src: &Sources,
    at: &str,
    subs: &mut usize,
    from: &mut Vec<String>,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!(
                "{at}: `${{` without its `}}`: write ${{NAME}} for the environment variable NAME"
            ));
        };
        let name = &after[..end];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!(
                "{at}: `${{{}}}` is no environment variable name: write ${{NAME}} with letters, digits and _",
                show(name)
            ));
        }
        *subs += 1;
        if *subs > MAX_SUBSTITUTIONS {
            return Err(format!(
                "{at}: more than {MAX_SUBSTITUTIONS} substitutions in one value: write the value itself"
            ));
        }
        let Some(v) = (src.env)(name) else {
            return Err(format!(
                "{at}: the environment variable {name} is not set (fio would put nothing there): set {name} or write the value itself"
            ));
        };
        // The file's text is checked for control characters as it is read;
        // the environment's is checked here, before it names a file.
        if let Some(c) = v.chars().find(|c| c.is_control()) {
            return Err(format!(
                "{at}: the environment variable {name} holds a control character ({}): a value holds none",
                show(&c.to_string())
            ));
        }
        out.push_str(&v);
        if out.len() > MAX_VALUE {
            return Err(format!(
                "{at}: {name} makes the value longer than stripebench evaluates ({MAX_VALUE} characters): write the value itself"
            ));
        }
        let said = "from the environment".to_string();
        if !from.contains(&said) {
            from.push(said);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Step 2: fio's reserved words; whether one was replaced.
fn keywords(
    text: &str,
    src: &Sources,
    at: &str,
    subs: &mut usize,
    from: &mut Vec<String>,
) -> Result<(String, bool), String> {
    let mut out = String::new();
    let mut replaced = false;
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        // fio matches its words as prefixes (strstr): `$ncpusx` is "2x".
        if let Some((k, w)) = Keyword::ALL.iter().find(|(_, w)| after.starts_with(w)) {
            *subs += 1;
            if *subs > MAX_SUBSTITUTIONS {
                return Err(format!(
                    "{at}: more than {MAX_SUBSTITUTIONS} substitutions in one value: write the value itself"
                ));
            }
            let n = (src.host)(*k).ok_or_else(|| {
                format!("{at}: ${w}: stripebench could not read it on this host: write the value itself")
            })?;
            out.push_str(&n.to_string());
            let said = format!("{} = {n}", k.said());
            if !from.contains(&said) {
                from.push(said);
            }
            replaced = true;
            rest = &after[w.len()..];
        } else if let Some(w) = NAME_WORDS.iter().find(|w| after.starts_with(*w)) {
            out.push('$');
            out.push_str(w);
            rest = &after[w.len()..];
        } else {
            let word: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            return Err(format!(
                "{at}: fio reads `${}` as text, not the environment (its words are $pagesize, $mb_memory and $ncpus): write ${{{}}} for the environment variable",
                show(&word),
                if word.is_empty() { "NAME" } else { &word }
            ));
        }
    }
    out.push_str(rest);
    Ok((out, replaced))
}

/// Step 3, a value in parentheses: fio's expression grammar in the
/// option's kind, written back as the option reads it.
fn arithmetic(key: &str, text: &str, at: &str, from: &mut Vec<String>) -> Result<String, String> {
    let k = kind(key);
    if k == Kind::Text {
        return Err(format!(
            "{at}: fio reads {key}= as text, never as arithmetic: write the value itself"
        ));
    }
    let grammar = Grammar::Fio {
        time: k != Kind::Number,
    };
    let mut p = Parser::new(text, grammar);
    let v = p
        .whole()
        .map_err(|e| format!("{at}: {e}: write the value itself"))?;
    let mut n = v.int()?;
    // fio (evaluate_arithmetic_expression): a result without a unit is
    // scaled by the option's implied unit and cast to a C int.
    if !p.units {
        if k == Kind::Seconds {
            n = n
                .checked_mul(1_000_000)
                .ok_or_else(|| format!("{at}: the result overflows"))?;
        }
        if i32::try_from(n).is_err() {
            return Err(format!(
                "{at}: {n} without a unit inside the parentheses, which fio keeps in 32 bits (it would read another number): put the unit inside, e.g. (5*1024)m or (3600s)"
            ));
        }
    }
    non_negative(n, at)?;
    from.push("arithmetic, as fio evaluates a value in parentheses".into());
    Ok(match k {
        // fio: microseconds, cut to whole seconds.
        Kind::Seconds => (n / 1_000_000).to_string(),
        Kind::Micros => format!("{n}us"),
        _ => n.to_string(),
    })
}

/// A result as text, refused when negative: no size, count or time fio
/// evaluates is (fio would wrap it into a huge unsigned number).
fn non_negative(n: i64, at: &str) -> Result<String, String> {
    if n < 0 {
        return Err(format!(
            "{at}: the result is {n}, below zero, which no size, count or time is: write the value itself"
        ));
    }
    Ok(n.to_string())
}

/// Which grammar: fio's own (with units, floats) or `bc`'s integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grammar {
    Fio { time: bool },
    Bc,
}

/// A value as fio's parser carries it: the integer, and the double when a
/// fraction or a fractional unit took part (fio's `has_dval`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct V {
    i: i64,
    d: f64,
    float: bool,
}

impl V {
    fn int_v(i: i64) -> V {
        V {
            i,
            d: i as f64,
            float: false,
        }
    }

    fn float_v(d: f64) -> Result<V, String> {
        if !d.is_finite() || d.abs() >= 9.2e18 {
            return Err("the result overflows".into());
        }
        Ok(V {
            i: d as i64,
            d,
            float: true,
        })
    }

    /// The integer fio keeps (a fraction cut toward zero, as C casts).
    fn int(&self) -> Result<i64, String> {
        if self.float {
            V::float_v(self.d).map(|v| v.i)
        } else {
            Ok(self.i)
        }
    }
}

const OVERFLOW: &str = "the result overflows";

/// A Pratt parser over the value's characters.
struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    grammar: Grammar,
    depth: usize,
    /// Whether a unit was written (fio's `units_specified`).
    units: bool,
}

// Binding powers, as fio's yacc precedence lists them, lowest first:
// `+ -`, a unit suffix, `* /`, `^` (right), `%`, unary minus. bc's: `+ -`,
// `* / %`, `^` (right), unary minus.
const BP_ADD: u8 = 10;
const BP_SUFFIX: u8 = 15;
const BP_MUL: u8 = 20;
const BP_POW: u8 = 30;
const BP_MOD_FIO: u8 = 40;
const BP_NEG: u8 = 50;

impl<'a> Parser<'a> {
    fn new(s: &'a str, grammar: Grammar) -> Parser<'a> {
        Parser {
            s: s.as_bytes(),
            at: 0,
            grammar,
            depth: 0,
            units: false,
        }
    }

    fn skip_blanks(&mut self) {
        while self
            .s
            .get(self.at)
            .is_some_and(|b| *b == b' ' || *b == b'\t')
        {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_blanks();
        self.s.get(self.at).copied()
    }

    /// The whole text as one expression.
    fn whole(&mut self) -> Result<V, String> {
        let v = self.expr(0)?;
        match self.peek() {
            None => Ok(v),
            Some(b':' | b',') => {
                Err("several values in one (`:` or `,`): stripebench evaluates one".into())
            }
            Some(_) => Err(format!(
                "`{}` is not arithmetic fio reads (+ - * / % ^, parentheses{})",
                show(
                    &String::from_utf8_lossy(&self.s[self.at..])
                        .chars()
                        .take(12)
                        .collect::<String>()
                ),
                if matches!(self.grammar, Grammar::Bc) {
                    ""
                } else {
                    ", numbers with k, m, g, t, p, kib, mib, gib, pib, us, ms, s, h, d"
                }
            )),
        }
    }

    fn expr(&mut self, min_bp: u8) -> Result<V, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!(
                "nested deeper than stripebench evaluates ({MAX_DEPTH} levels)"
            ));
        }
        let mut lhs = self.prefix()?;
        while let Some(b) = self.peek() {
            let fio = matches!(self.grammar, Grammar::Fio { .. });
            let (lbp, rbp) = match b {
                b'+' | b'-' => (BP_ADD, BP_ADD + 1),
                b'*' | b'/' => (BP_MUL, BP_MUL + 1),
                b'%' if fio => (BP_MOD_FIO, BP_MOD_FIO + 1),
                b'%' => (BP_MUL, BP_MUL + 1),
                b'^' => (BP_POW, BP_POW),
                b if fio && b.is_ascii_alphabetic() => (BP_SUFFIX, 0),
                _ => break,
            };
            if lbp < min_bp {
                break;
            }
            if b.is_ascii_alphabetic() {
                let unit = self.unit()?;
                lhs = suffix(lhs, unit)?;
                continue;
            }
            self.at += 1;
            let rhs = self.expr(rbp)?;
            lhs = binary(b, lhs, rhs)?;
        }
        self.depth -= 1;
        Ok(lhs)
    }

    fn prefix(&mut self) -> Result<V, String> {
        match self.peek() {
            Some(b'(') => {
                self.at += 1;
                let v = self.expr(0)?;
                if self.peek() != Some(b')') {
                    return Err("a `(` without its `)`".into());
                }
                self.at += 1;
                Ok(v)
            }
            Some(b'-') => {
                self.at += 1;
                let v = self.expr(BP_NEG)?;
                if v.float {
                    V::float_v(-v.d)
                } else {
                    v.i.checked_neg()
                        .map(V::int_v)
                        .ok_or_else(|| OVERFLOW.into())
                }
            }
            Some(b) if b.is_ascii_digit() || b == b'.' => self.number(),
            Some(_) | None => Err("a number is missing".into()),
        }
    }

    fn number(&mut self) -> Result<V, String> {
        let s = self.s;
        let start = self.at;
        let fio = matches!(self.grammar, Grammar::Fio { .. });
        if fio && s[start..].starts_with(b"0x") {
            let mut end = start + 2;
            while end < s.len() && s[end].is_ascii_hexdigit() {
                end += 1;
            }
            self.at = end;
            let digits = std::str::from_utf8(&s[start + 2..end]).unwrap_or("");
            // fio reads it into a C int.
            return i32::from_str_radix(digits, 16)
                .map(|n| V::int_v(n.into()))
                .map_err(|_| "a hexadecimal number fio does not read in 32 bits".into());
        }
        let mut end = start;
        while end < s.len() && s[end].is_ascii_digit() {
            end += 1;
        }
        let mut float = false;
        if end + 1 < s.len() && s[end] == b'.' && s[end + 1].is_ascii_digit() {
            float = true;
            end += 1;
            while end < s.len() && s[end].is_ascii_digit() {
                end += 1;
            }
        }
        // An exponent: fio's `1e3`, `2.5E-1`.
        if fio && end < s.len() && (s[end] == b'e' || s[end] == b'E') {
            let mut e = end + 1;
            while e < s.len() && (s[e] == b'+' || s[e] == b'-') {
                e += 1;
            }
            if e < s.len() && s[e].is_ascii_digit() {
                float = true;
                while e < s.len() && s[e].is_ascii_digit() {
                    e += 1;
                }
                end = e;
            }
        }
        let text = std::str::from_utf8(&s[start..end]).unwrap_or("");
        self.at = end;
        if float {
            if !fio {
                return Err(format!(
                    "{text} is a fraction, and stripebench takes whole numbers there"
                ));
            }
            return text
                .parse::<f64>()
                .map_err(|_| format!("`{text}` is no number"))
                .and_then(V::float_v);
        }
        match self.grammar {
            // fio's lexer reads a number into a C int.
            Grammar::Fio { .. } => text
                .parse::<i32>()
                .map(|n| V::int_v(n.into()))
                .map_err(|_| {
                    format!("{text} is over 2147483647, which fio does not read in a number inside parentheses: use a unit, e.g. 4g")
                }),
            Grammar::Bc => text.parse::<i64>().map(V::int_v).map_err(|_| OVERFLOW.into()),
        }
    }

    /// A unit after a number, as fio's lexer reads it.
    fn unit(&mut self) -> Result<V, String> {
        let s = self.s;
        let start = self.at;
        let mut end = start;
        while end < s.len() && s[end].is_ascii_alphabetic() {
            end += 1;
        }
        let word = String::from_utf8_lossy(&s[start..end]).to_ascii_lowercase();
        let time = matches!(self.grammar, Grammar::Fio { time: true });
        const KI: i64 = 1024;
        let (i, float) = match word.as_str() {
            "k" | "kb" => (KI, false),
            "m" if time => (60_000_000, false),
            "m" | "mb" => (KI * KI, false),
            "g" | "gb" => (KI * KI * KI, false),
            "t" | "tb" => (KI * KI * KI * KI, false),
            "p" | "pb" => (KI * KI * KI * KI * KI, false),
            "kib" => (1_000, false),
            "mib" => (1_000_000, false),
            "gib" => (1_000_000_000, false),
            "pib" => (1_000_000_000_000, false),
            "ms" => (1_000, true),
            "us" => (1, true),
            "s" => (1_000_000, false),
            "h" => (3_600_000_000, false),
            "d" => (86_400_000_000, false),
            _ => {
                return Err(format!(
                    "`{}` is no unit fio reads inside parentheses (k, m, g, t, p, kib, mib, gib, pib, us, ms, s, h, d)",
                    show(&word)
                ))
            }
        };
        self.at = end;
        self.units = true;
        Ok(V {
            i,
            d: i as f64,
            float,
        })
    }
}

/// `lhs UNIT`, as fio's grammar multiplies them.
fn suffix(lhs: V, unit: V) -> Result<V, String> {
    if !lhs.float && !unit.float {
        lhs.i
            .checked_mul(unit.i)
            .map(V::int_v)
            .ok_or_else(|| OVERFLOW.into())
    } else {
        V::float_v(lhs.d * unit.d)
    }
}

/// One binary operator, with fio's integer/float rules: integers stay
/// integers (division truncates), a float on either side makes a float.
fn binary(op: u8, a: V, b: V) -> Result<V, String> {
    let float = a.float || b.float;
    let overflow = || OVERFLOW.to_string();
    match op {
        b'+' if !float => a.i.checked_add(b.i).map(V::int_v).ok_or_else(overflow),
        b'-' if !float => a.i.checked_sub(b.i).map(V::int_v).ok_or_else(overflow),
        b'*' if !float => a.i.checked_mul(b.i).map(V::int_v).ok_or_else(overflow),
        b'+' => V::float_v(a.d + b.d),
        b'-' => V::float_v(a.d - b.d),
        b'*' => V::float_v(a.d * b.d),
        b'/' | b'%' if (!float && b.i == 0) || (float && b.d.abs() < 1e-20) => {
            Err("a division by zero".into())
        }
        b'/' if !float => a.i.checked_div(b.i).map(V::int_v).ok_or_else(overflow),
        b'/' => V::float_v(a.d / b.d),
        b'%' if float => Err("`%` on a fraction, which fio does not take".into()),
        b'%' => a.i.checked_rem(b.i).map(V::int_v).ok_or_else(overflow),
        b'^' if !float && b.i >= 0 => u32::try_from(b.i)
            .ok()
            .and_then(|e| a.i.checked_pow(e))
            .map(V::int_v)
            .ok_or_else(overflow),
        b'^' => V::float_v(a.d.powf(b.d)),
        _ => Err(format!("`{}` is no operator", op as char)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(k: Keyword) -> Option<u64> {
        Some(match k {
            Keyword::PageSize => 4096,
            Keyword::MbMemory => 2000,
            Keyword::Ncpus => 2,
        })
    }

    fn env(name: &str) -> Option<String> {
        match name {
            "SIZE" => Some("64m".into()),
            "N" => Some("4".into()),
            "EMPTY" => Some(String::new()),
            "KW" => Some("$ncpus*2".into()),
            "LONG" => Some("9".repeat(MAX_VALUE)),
            "ESC" => Some("a\u{1b}[31m".into()),
            _ => None,
        }
    }

    fn ev(key: &str, value: &str) -> Result<Option<Evaluated>, String> {
        evaluate(
            key,
            value,
            &Sources {
                env: &env,
                host: &host,
            },
        )
    }

    fn val(key: &str, value: &str) -> String {
        ev(key, value)
            .unwrap_or_else(|e| panic!("{value}: {e}"))
            .unwrap_or_else(|| panic!("{value}: not evaluated"))
            .value
    }

    fn err(key: &str, value: &str) -> String {
        let e = ev(key, value).expect_err(value);
        assert!(!e.contains('\n'), "{e}");
        e
    }

    #[test]
    fn plain_values_are_not_evaluated() {
        for v in ["4k", "randread", "/dev/sdb", "4k/10:64k/90", "5*1024"] {
            assert_eq!(ev("bs", v), Ok(None), "{v}");
        }
    }

    #[test]
    fn environment_variables_are_substituted_and_said() {
        let e = ev("size", "${SIZE}").unwrap().unwrap();
        assert_eq!(e.value, "64m");
        assert_eq!(e.note, "size=${SIZE} -> 64m (from the environment)");
        assert_eq!(val("filename", "/tmp/f${N}x${N}"), "/tmp/f4x4");
        assert_eq!(val("size", "${EMPTY}4k"), "4k");
        // fio substitutes its words in what the environment gave.
        assert_eq!(val("numjobs", "${KW}"), "4");
    }

    #[test]
    fn an_unset_or_unnamed_variable_is_refused_by_name() {
        let e = err("size", "${NOPE}");
        assert!(
            e.contains("NOPE is not set") && e.contains("set NOPE"),
            "{e}"
        );
        assert!(err("size", "${}").contains("no environment variable name"));
        assert!(err("size", "${A-B}").contains("no environment variable name"));
        assert!(err("size", "${SIZE").contains("without its"));
        let e = err("filename", "$HOME/x");
        assert!(
            e.contains("`$HOME` as text") && e.contains("${HOME}"),
            "{e}"
        );
    }

    #[test]
    fn command_substitution_is_refused_by_name() {
        for v in ["$(rm -rf /)", "`id`", "a`b", "(1)$(x)"] {
            assert!(err("size", v).contains("command substitution"), "{v}");
        }
    }

    #[test]
    fn reserved_words_are_this_host_s_and_bc_does_their_arithmetic() {
        assert_eq!(val("bs", "$pagesize"), "4096");
        assert_eq!(val("numjobs", "$ncpus"), "2");
        let e = ev("size", "5*1024*1024*$mb_memory/8").unwrap().unwrap();
        assert_eq!(e.value, (5u64 * 1024 * 1024 * 2000 / 8).to_string());
        assert!(
            e.note
                .contains("$mb_memory: this host's MemTotal in MiB = 2000")
                && e.note.contains("bc"),
            "{}",
            e.note
        );
        // bc: `^` over `*`, `%` with `*`, integer division, unary minus first.
        assert_eq!(val("size", "2*$ncpus^3"), "16");
        assert_eq!(val("size", "$pagesize*7%3"), "1");
        assert_eq!(val("size", "$pagesize/3"), "1365");
        assert_eq!(val("size", "-$ncpus^2+10"), "14");
        assert_eq!(val("size", "($ncpus+1)*$pagesize"), "12288");
        // fio leaves its file-name words for filename_format.
        assert_eq!(ev("filename_format", "f.$jobnum.$filenum"), Ok(None));
        // No unit in bc: refused, not misread.
        assert!(err("size", "$ncpus*4k").contains("bc"));
        let none = |_: Keyword| None;
        let e = evaluate(
            "bs",
            "$pagesize",
            &Sources {
                env: &env,
                host: &none,
            },
        )
        .unwrap_err();
        assert!(e.contains("could not read it"), "{e}");
    }

    #[test]
    fn each_operator_of_fio_s_expressions() {
        assert_eq!(val("size", "(5*1024*1024)"), "5242880");
        assert_eq!(val("size", "(1+2)"), "3");
        assert_eq!(val("size", "(10-4)"), "6");
        assert_eq!(val("size", "(7/2)"), "3");
        assert_eq!(val("size", "(7%4)"), "3");
        assert_eq!(val("size", "(2^10)"), "1024");
        assert_eq!(val("size", "(-3+5)"), "2");
        assert_eq!(val("size", "(0x10)"), "16");
        assert_eq!(val("size", "( 2 * 3 )"), "6");
    }

    #[test]
    fn fio_s_precedence_and_parentheses() {
        assert_eq!(val("size", "(2+3*4)"), "14");
        assert_eq!(val("size", "((2+3)*4)"), "20");
        assert_eq!(val("size", "(2*3^2)"), "18");
        assert_eq!(val("size", "(2^3^2)"), "512");
        // fio binds `%` tighter than `^` and `*`.
        assert_eq!(val("size", "(2*5%3)"), "4");
        assert_eq!(val("size", "(10-2-3)"), "5");
        assert_eq!(val("size", "(100/10/2)"), "5");
        // Unary minus binds tightest in fio's grammar.
        assert_eq!(val("size", "(-2^2+1)"), "5");
    }

    #[test]
    fn units_inside_parentheses_as_fio_s_lexer_reads_them() {
        assert_eq!(val("size", "(4k*3)"), "12288");
        assert_eq!(val("size", "(1m+1k)"), "1049600");
        assert_eq!(val("size", "(2g)"), "2147483648");
        assert_eq!(val("size", "(5*1024)m"), (5u64 << 30).to_string());
        assert_eq!(val("size", "(4kib)"), "4000");
        assert_eq!(val("size", "(1.5k)"), "1536");
        assert_eq!(val("size", "(2.5*2)"), "5");
        // A unit binds looser than `/`: fio's (10/2k) is 5k.
        assert_eq!(val("size", "(10/2k)"), "5120");
        // Times: `m` is minutes, and whole seconds for runtime.
        assert_eq!(val("runtime", "(1m+30s)"), "90");
        assert_eq!(val("runtime", "(30)"), "30");
        assert_eq!(val("thinktime", "(10ms)"), "10000us");
        assert_eq!(val("thinktime", "(250)"), "250us");
    }

    #[test]
    fn overflow_division_by_zero_and_depth_are_refused() {
        assert!(err("size", "(1/0)").contains("division by zero"));
        assert!(err("size", "(1%0)").contains("division by zero"));
        assert!(err("size", "(1.5/0)").contains("division by zero"));
        assert!(err("size", "$ncpus/0").contains("division by zero"));
        assert!(err("size", "(8p*8p)").contains("overflows"));
        assert!(err("size", "(2^64)").contains("overflows"));
        assert!(err("size", "($pagesize*999999999999*99999999)").contains("overflows"));
        assert!(err("size", "(99999999999)").contains("2147483647"));
        // fio keeps a unitless result in a C int.
        let e = err("size", "(5*1024*1024*1024)");
        assert!(e.contains("32 bits") && e.contains("(5*1024)m"), "{e}");
        assert!(err("runtime", "(3600)").contains("32 bits"));
        let deep = format!(
            "{}1{}",
            "(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert!(err("size", &deep).contains("nested deeper"));
        let minus = format!("({}1)", "-".repeat(MAX_DEPTH + 1));
        assert!(err("size", &minus).contains("nested deeper"));
        assert_eq!(
            val("size", &format!("{}1{}", "(".repeat(8), ")".repeat(8))),
            "1"
        );
    }

    #[test]
    fn malformed_or_unbounded_values_are_refused_in_one_line() {
        assert!(err("size", "(1+)").contains("number is missing"));
        assert!(err("size", "(1+2").contains("without its"));
        assert!(err("size", "(1)x").contains("no unit"));
        assert!(err("size", "(2.5%2)").contains("fraction"));
        assert!(err("size", "(1k),(2k)").contains("several values"));
        assert!(err("rw", "(randread)").contains("as text"));
        assert!(err("size", &format!("({})", "1+".repeat(MAX_VALUE))).contains("characters"));
        assert!(err("size", "${LONG}${LONG}").contains("longer than"));
        let e = err("filename", "${ESC}");
        assert!(
            e.contains("control character") && !e.contains('\u{1b}'),
            "{e}"
        );
        assert!(err("size", "(1-2)").contains("below zero"));
        assert!(err("size", "$ncpus-3").contains("below zero"));
        let many = "${N}".repeat(MAX_SUBSTITUTIONS + 1);
        assert!(err("filename", &many).contains("substitutions"));
    }
}
