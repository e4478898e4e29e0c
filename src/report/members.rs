//! Many members in one run (from [`MANY`] targets, or workers of one
//! target): instead of a line per member, which at 64 members is a tangle
//! with a legend longer than the chart, two charts that stay readable up to
//! 1024 members and more, drawn by the SVG plot (`--plot`) and the HTML
//! report alike:
//!
//! - a heatmap, one row per member sorted by its rate (slowest on top), its
//!   MB/s in each stretch of the window as a colour, with the colour scale;
//! - the members' rates sorted, with the fence of compare's slow-member
//!   verdict ([`crate::analysis::slow_member::judge`], the same rule and
//!   the same value, applied to the members' figures in this run).
//!
//! [`Members`] is the model (built once from a document); [`heatmap_svg`]
//! and [`sorted_svg`] draw it as plain SVG. The output is bounded: time is
//! cut into at most [`MAX_COLUMNS`] columns, and fewer as the rows grow, so
//! that the cells stay under [`MAX_CELLS`]; cells of one colour are one path.
//! Every name is escaped ([`xml`]) where it enters the markup.

use std::fmt::Write;

use crate::analysis::slow_member::{judge, Figure, Sample, Verdict};
use crate::document::run::{RunDocument, WorkerDoc};

/// From this many members the report draws [`Members`] instead of a line
/// per member (16 lines and their legend still read).
pub const MANY: usize = 17;
/// The most time columns of the heatmap.
pub const MAX_COLUMNS: usize = 240;
/// The most cells (rows × columns) of the heatmap: 1024 members get 64
/// columns.
pub const MAX_CELLS: usize = 65_536;
/// The colour levels of the heatmap (one SVG path each).
pub const LEVELS: usize = 32;

/// One member: a target (several targets) or a worker (one target).
pub struct Member {
    pub label: String,
    /// Its rate over its own active time (the document's figure).
    pub bytes_per_sec: f64,
    /// Its MB/s in each column of the heatmap, `None` where it had no
    /// second.
    pub cells: Vec<Option<f64>>,
    /// The host adapter its disk is behind (a target's `adapter`), when
    /// the rows are targets behind two or more: marked beside its row.
    pub group: Option<String>,
}

/// The heatmap and sorted-members model of a run with many members.
pub struct Members {
    /// `target` or `worker`: what a row is.
    pub unit: &'static str,
    /// Sorted by rate, slowest first.
    pub rows: Vec<Member>,
    /// The controllers the rows' disks are behind, in order (empty unless
    /// two or more): each row's group is marked by its colour.
    pub groups: Vec<String>,
    /// Each heatmap column's seconds, `start..end`.
    pub columns: Vec<(u64, u64)>,
    /// The highest cell, MB/s (the top of the colour scale), at least 1.
    pub max_cell_mb: f64,
    /// The verdict over the members' figures, as compare judges members
    /// measured together.
    pub verdict: Verdict,
}

impl Members {
    /// The model of `doc` with its workers' per-second intervals
    /// (`per_second`, as [`RunDocument::workers_per_second`] gives them;
    /// empty when the intervals do not divide a second), or `None` below
    /// [`MANY`] members.
    pub fn of(doc: &RunDocument, per_second: &[WorkerDoc]) -> Option<Members> {
        let by_target = doc.targets.len() > 1;
        let count = if by_target {
            doc.targets.len()
        } else {
            doc.workers.len()
        };
        if count < MANY {
            return None;
        }
        let seconds = (per_second.iter())
            .flat_map(|w| w.intervals.iter().map(|i| i.t as u64 + 1))
            .max()
            .unwrap_or(0);
        // Bytes per member per second; a member with no second there: None.
        let mut bytes: Vec<Vec<Option<u64>>> = vec![vec![None; seconds as usize]; count];
        for (k, w) in per_second.iter().enumerate() {
            // A row by the target's place in the document, or the worker's.
            let m = if by_target {
                (doc.targets.iter())
                    .position(|t| t.index == w.target_index)
                    .unwrap_or(usize::MAX)
            } else {
                k
            };
            let Some(row) = bytes.get_mut(m) else {
                continue;
            };
            for i in &w.intervals {
                if let Some(c) = row.get_mut(i.t as usize) {
                    *c = Some(c.unwrap_or(0) + i.bytes);
                }
            }
        }
        let columns = columns(seconds, count);
        let adapters: Vec<Option<String>> = if by_target {
            doc.targets
                .iter()
                .map(|t| t.adapter().map(str::to_string))
                .collect()
        } else {
            vec![None; count]
        };
        let mut groups: Vec<String> = adapters.iter().flatten().cloned().collect();
        groups.sort();
        groups.dedup();
        if groups.len() < 2 {
            groups.clear();
        }
        let figures: Vec<(String, f64, Option<u64>, u64)> = if by_target {
            (doc.targets.iter())
                .map(|t| {
                    let f = &t.figures;
                    let p99 = f.latency_ns.as_ref().map(|l| l.p99);
                    (t.path.clone(), f.bytes_per_sec, p99, f.ios)
                })
                .collect()
        } else {
            (doc.workers.iter())
                .map(|w| {
                    let f = &w.figures;
                    let p99 = f.latency_ns.as_ref().map(|l| l.p99);
                    (
                        format!("w{} {}", w.id, w.target),
                        f.bytes_per_sec,
                        p99,
                        f.ios,
                    )
                })
                .collect()
        };
        let verdict = verdict_of(doc, &figures);
        let mut rows: Vec<Member> = (figures.into_iter().zip(&bytes).zip(adapters))
            .map(|(((label, bytes_per_sec, _, _), secs), group)| Member {
                label,
                bytes_per_sec,
                cells: columns.iter().map(|&(a, b)| mean_mb(secs, a, b)).collect(),
                group: group.filter(|_| !groups.is_empty()),
            })
            .collect();
        rows.sort_by(|a, b| {
            (a.bytes_per_sec.total_cmp(&b.bytes_per_sec)).then_with(|| a.label.cmp(&b.label))
        });
        let max_cell_mb = (rows.iter())
            .flat_map(|r| r.cells.iter().flatten().copied())
            .fold(1.0, f64::max);
        Some(Members {
            unit: if by_target { "target" } else { "worker" },
            rows,
            groups,
            columns,
            max_cell_mb,
            verdict,
        })
    }

    /// The rate fence (B/s) of the verdict, when it judged.
    pub fn fence(&self) -> Option<f64> {
        self.verdict.rate.as_ref().map(|f| f.threshold)
    }

    /// How many rows stand below the fence (they are the first rows).
    pub fn below_fence(&self) -> usize {
        self.fence().map_or(0, |t| {
            self.rows.iter().filter(|r| r.bytes_per_sec < t).count()
        })
    }

    /// The `k` slowest and `k` fastest, named with their MB/s, as one line.
    pub fn extremes(&self, k: usize) -> String {
        let name = |r: &Member| format!("{} {:.1}", r.label, r.bytes_per_sec / 1e6);
        let slow: Vec<String> = self.rows.iter().take(k).map(name).collect();
        let fast: Vec<String> = self.rows.iter().rev().take(k).map(name).collect();
        format!(
            "slowest (MB/s): {}; fastest: {}",
            slow.join(", "),
            fast.join(", ")
        )
    }

    /// The fence in words, or why there is none.
    pub fn fence_words(&self) -> String {
        match &self.verdict.rate {
            Some(f) => format!(
                "fence {:.1} MB/s = median {:.1} - {} x spread {:.1} (compare's slow-member rule over the {}s' rates in this run); {} below it",
                f.threshold / 1e6,
                f.median / 1e6,
                self.verdict.k,
                f.spread / 1e6,
                self.unit,
                self.below_fence()
            ),
            None => format!(
                "no fence: {}",
                self.verdict.none.as_deref().unwrap_or("not judged")
            ),
        }
    }
}

/// `text` cut to `max` characters with an ellipsis, so that one line of
/// an SVG stays on the chart's width (a verdict that could not judge lists
/// every member short of I/O: at 256 members it ran off both sides; the
/// HTML's notes and the JSON keep it whole).
fn fit_line(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max - 1).collect();
    format!("{cut}…")
}

/// The verdict over `figures` (label, B/s, p99, I/Os): compare's rule for
/// members measured together, its floor widened when the workers
/// outnumbered the CPUs, as compare widens it.
fn verdict_of(doc: &RunDocument, figures: &[(String, f64, Option<u64>, u64)]) -> Verdict {
    let members: Vec<(String, Option<Figure>)> = (figures.iter())
        .map(|(l, b, p, n)| (l.clone(), Figure::of(l, &[Sample::measured(*b, *p, *n)])))
        .collect();
    let (w, c) = (doc.workers.len(), doc.host.cpus);
    judge(&members, "together", (w > c).then_some((w, c)))
}

/// The heatmap's columns over `seconds`: one a second, or as many seconds
/// each as keep them within [`MAX_COLUMNS`] and the cells of `rows` rows
/// within [`MAX_CELLS`].
pub fn columns(seconds: u64, rows: usize) -> Vec<(u64, u64)> {
    let most = (MAX_CELLS / rows.max(1)).clamp(8, MAX_COLUMNS) as u64;
    let per = seconds.div_ceil(most).max(1);
    (0..seconds.div_ceil(per))
        .map(|k| (k * per, ((k + 1) * per).min(seconds)))
        .collect()
}

/// The mean MB/s over seconds `a..b` that the member has; `None` with none.
fn mean_mb(secs: &[Option<u64>], a: u64, b: u64) -> Option<f64> {
    let had: Vec<u64> = (a..b)
        .filter_map(|t| secs.get(t as usize).copied().flatten())
        .collect();
    (!had.is_empty()).then(|| had.iter().sum::<u64>() as f64 / had.len() as f64 / 1e6)
}

/// A colour of the scale (viridis: dark for slow, yellow for fast), at
/// `x` from 0 to 1.
pub fn scale(x: f64) -> (u8, u8, u8) {
    const STOPS: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let x = x.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f).round() as u8;
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// The heatmap's geometry: the plot's left edge and width, each row's height.
const LEFT: f64 = 290.0;
const PLOT_W: f64 = 700.0;
const TOP: f64 = 50.0;
pub const WIDTH: u32 = 1100;

/// The height of the heatmap's plot for `rows`: 12 px a row, within
/// 240..800 (a row is then under a pixel past 800 members).
fn plot_h(rows: usize) -> f64 {
    (rows as f64 * 12.0).clamp(240.0, 800.0)
}

/// The heatmap as an SVG of [`WIDTH`]: rows sorted slowest on top, a name
/// on every row when they fit and at intervals else (the slowest and the
/// fastest always), the fence's place between the rows, the colour scale
/// on the right, seconds on the x axis.
pub fn heatmap_svg(m: &Members) -> String {
    let n = m.rows.len().max(1);
    let h = plot_h(n);
    let rh = h / n as f64;
    let cols = m.columns.len().max(1);
    let cw = PLOT_W / cols as f64;
    let height = (TOP + h + if m.groups.is_empty() { 60.0 } else { 84.0 }).ceil() as u32;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    let per = m.columns.first().map_or(1, |c| c.1 - c.0);
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"22\" font-size=\"17\" text-anchor=\"middle\">MB/s (10^6 B/s) of each {} ({} rows, slowest on top) over time{}</text>",
        WIDTH / 2,
        m.unit,
        m.rows.len(),
        if per > 1 { format!(", {per} s a column") } else { String::new() }
    );
    // The cells: one path per colour level (grey where a member had no second).
    let mut paths: Vec<String> = vec![String::new(); LEVELS + 1];
    for (r, row) in m.rows.iter().enumerate() {
        let y = TOP + r as f64 * rh;
        for (c, cell) in row.cells.iter().enumerate() {
            let level = cell.map_or(LEVELS, |v| {
                ((v / m.max_cell_mb) * (LEVELS - 1) as f64).round() as usize
            });
            let x = LEFT + c as f64 * cw;
            // Half a pixel over the next cell: a page that scales the SVG
            // leaves no white seam between cells.
            let (w, h) = (cw + 0.5, rh + 0.5);
            let _ = write!(
                paths[level.min(LEVELS)],
                "M{x:.1} {y:.2}h{w:.2}v{h:.2}h-{w:.2}z"
            );
        }
    }
    for (level, d) in paths.iter().enumerate().filter(|(_, d)| !d.is_empty()) {
        let fill = if level == LEVELS {
            "#d9d9d9".to_string()
        } else {
            hex(scale(level as f64 / (LEVELS - 1) as f64))
        };
        let _ = writeln!(
            s,
            "<path fill=\"{fill}\" shape-rendering=\"crispEdges\" d=\"{d}\"/>"
        );
    }
    row_labels(&mut s, m, rh);
    group_marks(&mut s, m, rh, h);
    fence_mark(&mut s, m, rh);
    time_axis(&mut s, m, h, cw);
    colour_legend(&mut s, m, h);
    s.push_str("</svg>\n");
    s
}

/// Each row's controller as a colour in a strip left of the cells, and
/// the colours' key under the plot (when the rows are behind two or more).
fn group_marks(s: &mut String, m: &Members, rh: f64, h: f64) {
    if m.groups.is_empty() {
        return;
    }
    // One colour per controller, in the order of `groups`.
    let palette: Vec<String> = crate::report::draw::palette(m.groups.len())
        .into_iter()
        .map(|c| hex((c.0, c.1, c.2)))
        .collect();
    let colour = |g: &str| {
        let k = m.groups.iter().position(|x| x == g).unwrap_or(0);
        palette[k].clone()
    };
    for (r, row) in m.rows.iter().enumerate() {
        if let Some(g) = &row.group {
            let _ = write!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.2}\" width=\"7\" height=\"{:.2}\" fill=\"{}\"/>",
                LEFT - 10.0,
                TOP + r as f64 * rh,
                rh + 0.5,
                colour(g)
            );
        }
    }
    s.push('\n');
    let mut x = LEFT;
    let y = TOP + h + 74.0;
    let _ = write!(
        s,
        "<text x=\"{:.0}\" y=\"{y:.1}\" font-size=\"11\" text-anchor=\"end\">controller:</text>",
        x - 8.0
    );
    for g in &m.groups {
        let name = crate::report::escape::xml(g);
        let _ = write!(
            s,
            "<rect x=\"{x:.0}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.0}\" y=\"{y:.1}\" font-size=\"11\">{name}</text>",
            y - 9.0,
            colour(g),
            x + 14.0
        );
        x += 14.0 + 7.0 * g.chars().count().min(40) as f64 + 12.0;
    }
    s.push('\n');
}

/// The names left of the rows: every row when rows are 9 px or more, else
/// at intervals of at least 12 px, with the first and last rows always.
fn row_labels(s: &mut String, m: &Members, rh: f64) {
    let n = m.rows.len();
    let every = if rh >= 9.0 {
        1
    } else {
        (12.0 / rh).ceil() as usize
    };
    // At intervals the names have 12 px or more each: a readable size.
    let size = if every == 1 {
        (rh - 1.0).clamp(7.0, 11.0)
    } else {
        10.0
    };
    let mut shown: Vec<usize> = (0..n).step_by(every.max(1)).collect();
    // The fastest too, the interval's last label moved aside for it.
    if shown.last() != Some(&(n - 1)) && n > 0 {
        if shown
            .last()
            .is_some_and(|&l| (n - 1 - l) as f64 * rh < 12.0)
        {
            shown.pop();
        }
        shown.push(n - 1);
    }
    for r in shown {
        let y = TOP + (r as f64 + 0.5) * rh + size / 3.0;
        let label = &m.rows[r].label;
        let short: String = if label.chars().count() > 34 {
            let tail: String = (label.chars().rev().take(33).collect::<Vec<_>>())
                .into_iter()
                .rev()
                .collect();
            format!("…{tail}")
        } else {
            label.clone()
        };
        let _ = writeln!(
            s,
            "<text x=\"{:.0}\" y=\"{y:.1}\" font-size=\"{size:.0}\" text-anchor=\"end\">#{} {} {:.1}</text>",
            // Clear of the controllers' strip when there is one.
            LEFT - if m.groups.is_empty() { 6.0 } else { 14.0 },
            r + 1,
            crate::report::escape::xml(&short),
            m.rows[r].bytes_per_sec / 1e6
        );
    }
}

/// A red line between the rows below the fence and the others, labelled.
fn fence_mark(s: &mut String, m: &Members, rh: f64) {
    let below = m.below_fence();
    if m.fence().is_none() || below == 0 {
        return;
    }
    let y = TOP + below as f64 * rh;
    let _ = writeln!(
        s,
        "<line x1=\"{:.0}\" x2=\"{:.0}\" y1=\"{y:.2}\" y2=\"{y:.2}\" stroke=\"#d62728\" stroke-width=\"2\"/>\n<text x=\"{:.0}\" y=\"{:.1}\" font-size=\"11\" fill=\"#d62728\">{below} below fence</text>",
        LEFT - 4.0,
        LEFT + PLOT_W + 4.0,
        LEFT + PLOT_W + 8.0,
        y + 4.0
    );
}

/// Seconds under the plot: a tick at about every sixth of the window.
fn time_axis(s: &mut String, m: &Members, h: f64, cw: f64) {
    let cols = m.columns.len();
    let y = TOP + h;
    let _ = writeln!(
        s,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{PLOT_W}\" height=\"{h:.1}\" fill=\"none\" stroke=\"black\"/>"
    );
    let step = cols.div_ceil(6).max(1);
    for c in (0..=cols).step_by(step) {
        let x = LEFT + c as f64 * cw;
        let t = m
            .columns
            .get(c)
            .map_or_else(|| m.columns.last().map_or(0, |l| l.1), |col| col.0);
        let _ = writeln!(
            s,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y:.1}\" y2=\"{:.1}\" stroke=\"black\"/><text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{t}</text>",
            y + 5.0,
            y + 19.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.0}\" y=\"{:.1}\" font-size=\"13\" text-anchor=\"middle\">seconds into the window</text>",
        LEFT + PLOT_W / 2.0,
        y + 40.0
    );
}

/// The colour scale right of the plot: 0 at the bottom, the highest cell at
/// the top, and the grey of a member with no second there.
fn colour_legend(s: &mut String, m: &Members, h: f64) {
    let x = LEFT + PLOT_W + 40.0;
    let bar_h = h.min(300.0);
    let y0 = TOP + (h - bar_h) / 2.0;
    let steps = 48;
    for k in 0..steps {
        let frac = k as f64 / (steps - 1) as f64;
        let y = y0 + bar_h * (1.0 - (k + 1) as f64 / steps as f64);
        let _ = write!(
            s,
            "<rect x=\"{x:.0}\" y=\"{y:.2}\" width=\"18\" height=\"{:.2}\" fill=\"{}\"/>",
            bar_h / steps as f64 + 0.5,
            hex(scale(frac))
        );
    }
    s.push('\n');
    for k in 0..=4 {
        let v = m.max_cell_mb * k as f64 / 4.0;
        let y = y0 + bar_h * (1.0 - k as f64 / 4.0);
        let _ = writeln!(
            s,
            "<text x=\"{:.0}\" y=\"{:.1}\" font-size=\"11\">{v:.1}</text>",
            x + 24.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{x:.0}\" y=\"{:.1}\" font-size=\"11\">MB/s</text>\n<rect x=\"{x:.0}\" y=\"{:.1}\" width=\"18\" height=\"10\" fill=\"#d9d9d9\"/><text x=\"{:.0}\" y=\"{:.1}\" font-size=\"11\">no I/O</text>",
        y0 - 8.0,
        y0 + bar_h + 12.0,
        x + 24.0,
        y0 + bar_h + 21.0
    );
}

/// The sorted-members chart as an SVG of [`WIDTH`]: each member's MB/s as a
/// bar, slowest on the left, those below the fence in red, the median and
/// the fence as lines, the slowest and fastest named.
pub fn sorted_svg(m: &Members) -> String {
    let (left, top, w, h) = (90.0, 70.0, 960.0, 300.0);
    let n = m.rows.len().max(1);
    let max = (m.rows.iter().map(|r| r.bytes_per_sec / 1e6))
        .chain(m.fence().map(|f| f / 1e6))
        .fold(1.0, f64::max)
        * 1.1;
    let y_of = |mb: f64| top + h * (1.0 - (mb / max).clamp(0.0, 1.0));
    let height = (top + h + 60.0) as u32;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"22\" font-size=\"17\" text-anchor=\"middle\">each {}'s MB/s, sorted, with the verdict's fence</text>\n<text x=\"{}\" y=\"42\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n<text x=\"{}\" y=\"58\" font-size=\"11\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
        WIDTH / 2,
        m.unit,
        WIDTH / 2,
        crate::report::escape::xml(&fit_line(&m.fence_words(), 150)),
        WIDTH / 2,
        crate::report::escape::xml(&fit_line(&m.extremes(3), 190))
    );
    // The y axis, five ticks.
    for k in 0..=5 {
        let v = max / 1.1 * k as f64 / 5.0;
        let y = y_of(v);
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" x2=\"{:.0}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{:.0}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{v:.1}</text>",
            left + w,
            left - 6.0,
            y + 4.0
        );
    }
    let bw = w / n as f64;
    let fence = m.fence().unwrap_or(f64::NEG_INFINITY);
    let (mut red, mut blue) = (String::new(), String::new());
    for (k, r) in m.rows.iter().enumerate() {
        let x = left + k as f64 * bw;
        let y = y_of(r.bytes_per_sec / 1e6);
        // A member below the fence is at least 3 px wide: seen among 1024.
        let (path, bw) = if r.bytes_per_sec < fence {
            (&mut red, bw.max(3.0))
        } else {
            (&mut blue, bw)
        };
        let _ = write!(path, "M{x:.2} {y:.2}h{bw:.2}V{:.0}h-{bw:.2}z", top + h);
    }
    let _ = writeln!(
        s,
        "<path fill=\"#1f77b4\" d=\"{blue}\"/>\n<path fill=\"#d62728\" d=\"{red}\"/>"
    );
    let mut hline = |mb: f64, color: &str, dash: &str, label: String| {
        let y = y_of(mb);
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" x2=\"{:.0}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{color}\" stroke-width=\"2\" stroke-dasharray=\"{dash}\"/><text x=\"{:.0}\" y=\"{:.1}\" font-size=\"12\" fill=\"{color}\" text-anchor=\"end\" stroke=\"white\" stroke-width=\"4\" paint-order=\"stroke\">{label}</text>",
            left + w,
            left + w - 4.0,
            y - 5.0
        );
    };
    if let Some(f) = &m.verdict.rate {
        hline(
            f.median / 1e6,
            "#444",
            "2 3",
            format!("median {:.1}", f.median / 1e6),
        );
        hline(
            f.threshold / 1e6,
            "#d62728",
            "8 4",
            format!("fence {:.1}", f.threshold / 1e6),
        );
    }
    let _ = writeln!(
        s,
        "<rect x=\"{left}\" y=\"{top}\" width=\"{w}\" height=\"{h}\" fill=\"none\" stroke=\"black\"/>\n<text x=\"{left}\" y=\"{:.0}\" font-size=\"12\">slowest</text><text x=\"{:.0}\" y=\"{:.0}\" font-size=\"12\" text-anchor=\"end\">fastest</text>\n<text x=\"{:.0}\" y=\"{:.0}\" font-size=\"13\" text-anchor=\"middle\">{} members, sorted by MB/s (10^6 B/s)</text>\n<text x=\"20\" y=\"{:.0}\" font-size=\"13\" transform=\"rotate(-90 20 {:.0})\" text-anchor=\"middle\">MB/s</text>",
        top + h + 18.0,
        left + w,
        top + h + 18.0,
        left + w / 2.0,
        top + h + 40.0,
        m.rows.len(),
        top + h / 2.0,
        top + h / 2.0
    );
    s.push_str("</svg>\n");
    s
}

/// The height an SVG's root element states (its first `height="N"`); 0
/// when it states none.
pub fn svg_height(svg: &str) -> u32 {
    svg.split_once(" height=\"")
        .and_then(|(_, rest)| rest.split('"').next())
        .and_then(|h| h.trim_end_matches("px").parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::many_doc;

    fn model(doc: &RunDocument) -> Members {
        Members::of(doc, &doc.workers_per_second().unwrap()).unwrap()
    }

    /// The rows' `#rank` labels and the heatmap's cells, from the parsed SVG.
    fn parse(svg: &str) -> (usize, usize) {
        let x = roxmltree::Document::parse(svg).unwrap();
        let cells: usize = (x.descendants())
            .filter(|n| n.has_tag_name("path"))
            .map(|n| n.attribute("d").unwrap().matches('M').count())
            .sum();
        let labels = (x.descendants())
            .filter(|n| n.has_tag_name("text"))
            .filter(|n| n.text().is_some_and(|t| t.starts_with('#')))
            .count();
        (cells, labels)
    }

    #[test]
    fn a_row_per_member_sorted_by_rate_with_compare_s_fence() {
        let doc = many_doc(64, 30);
        let m = model(&doc);
        assert_eq!((m.unit, m.rows.len(), m.columns.len()), ("target", 64, 30));
        assert!(m
            .rows
            .windows(2)
            .all(|w| w[0].bytes_per_sec <= w[1].bytes_per_sec));
        assert_eq!(
            m.rows[0].label, "/dev/zram3",
            "the planted slow member first"
        );
        assert_eq!(m.rows[63].label, "/dev/zram63");
        // The fence is the verdict's: compare's rule over the same figures.
        let figures: Vec<(String, Option<Figure>)> = (doc.targets.iter())
            .map(|t| {
                let p99 = t.figures.latency_ns.as_ref().map(|l| l.p99);
                let s = Sample::measured(t.figures.bytes_per_sec, p99, t.figures.ios);
                (t.path.clone(), Figure::of(&t.path, &[s]))
            })
            .collect();
        let v = judge(&figures, "together", None);
        assert_eq!(m.fence(), Some(v.rate.unwrap().threshold));
        assert_eq!(m.below_fence(), 1);
        assert!(
            m.fence_words().contains("1 below it"),
            "{}",
            m.fence_words()
        );
        // The member that stalled halfway: its late columns a tenth of its early ones.
        let r5 = m.rows.iter().find(|r| r.label == "/dev/zram5").unwrap();
        assert!((r5.cells[0].unwrap() / r5.cells[29].unwrap() - 10.0).abs() < 1e-9);
        // Every row's every column is a cell; 64 rows at 12 px each are all named.
        let (cells, labels) = parse(&heatmap_svg(&m));
        assert_eq!((cells, labels), (64 * 30, 64));
        let sorted = sorted_svg(&m);
        let x = roxmltree::Document::parse(&sorted).unwrap();
        let bars: usize = (x.descendants())
            .filter(|n| n.has_tag_name("path"))
            .map(|n| n.attribute("d").unwrap().matches('M').count())
            .sum();
        assert_eq!(bars, 64);
        let fence = format!("fence {:.1}", m.fence().unwrap() / 1e6);
        assert!(
            x.descendants().any(|n| n.text() == Some(fence.as_str())),
            "{sorted}"
        );
    }

    #[test]
    fn at_256_members_names_stand_at_intervals_with_the_slowest_and_fastest() {
        let m = model(&many_doc(256, 40));
        let (cells, labels) = parse(&heatmap_svg(&m));
        assert_eq!(cells, 256 * 40);
        assert!(labels > 40 && labels < 256, "{labels}");
        let svg = heatmap_svg(&m);
        assert!(svg.contains(">#1 /dev/zram3 20.0<"), "the slowest is named");
        assert!(
            svg.contains(">#256 /dev/zram255 355.0<"),
            "the fastest is named"
        );
    }

    #[test]
    fn a_hostile_target_name_is_escaped_in_the_svg_and_the_html() {
        let doc = many_doc(20, 5);
        let m = model(&doc);
        for svg in [heatmap_svg(&m), sorted_svg(&m)] {
            assert!(!svg.contains("<b>") && !svg.contains('\u{1b}'));
            roxmltree::Document::parse(&svg).unwrap();
        }
        assert!(heatmap_svg(&m).contains("/dev/&lt;b&gt;&amp;&quot;x&#39;\\u{1b}[31m"));
        let whole = crate::report::plot::run_svg(&doc).unwrap();
        assert!(!whole.contains("<b>") && !whole.contains('\u{1b}'));
        roxmltree::Document::parse(&whole).unwrap();
        let html =
            crate::report::html::render(&crate::document::load::AnyDocument::Run(Box::new(doc)))
                .unwrap();
        assert!(!html.contains("<b>") && !html.contains('\u{1b}'));
        assert!(html.contains("below fence"), "the heatmap is in the page");
    }

    #[test]
    fn a_long_fence_line_is_cut_to_the_charts_width() {
        let long = "no fence: not enough I/O to judge (member /dev/x: 0 I/Os, ".repeat(20);
        let cut = fit_line(&long, 170);
        assert_eq!(cut.chars().count(), 170);
        assert!(cut.ends_with('…'));
        assert_eq!(fit_line("short", 170), "short");
    }

    /// Disks behind several controllers: each row's controller is marked
    /// in the strip, with a key naming them (escaped), and only then.
    #[test]
    fn rows_behind_two_controllers_or_more_are_marked_with_a_key() {
        let mut doc = many_doc(20, 5);
        let plain = heatmap_svg(&model(&doc));
        assert!(!plain.contains("controller:"));
        for (i, t) in doc.targets.iter_mut().enumerate() {
            t.adapter = Some(Some(format!(
                "0000:00:0{}.0{}",
                3 + i % 2,
                if i % 2 == 1 { "<x>" } else { "" }
            )));
        }
        let m = model(&doc);
        assert_eq!(m.groups, ["0000:00:03.0", "0000:00:04.0<x>"]);
        assert!(m.rows.iter().all(|r| r.group.is_some()));
        let svg = heatmap_svg(&m);
        roxmltree::Document::parse(&svg).unwrap();
        assert!(
            svg.contains("controller:") && svg.contains("0000:00:04.0&lt;x&gt;"),
            "key"
        );
        assert_eq!(svg.matches("width=\"7\"").count(), 20, "a mark per row");
    }

    #[test]
    fn a_thousand_members_over_ten_minutes_stay_bounded() {
        let m = model(&many_doc(1024, 600));
        assert_eq!(m.rows.len(), 1024);
        assert!(m.columns.len() * 1024 <= MAX_CELLS, "{}", m.columns.len());
        // The columns cover the window, whole seconds each.
        assert_eq!((m.columns[0].0, m.columns.last().unwrap().1), (0, 600));
        let svg = heatmap_svg(&m);
        assert!(svg.len() < 3_000_000, "{} bytes", svg.len());
        assert_eq!(parse(&svg).0, 1024 * m.columns.len());
        assert!(sorted_svg(&m).len() < 200_000);
        // A short run keeps a column a second.
        assert_eq!(columns(30, 1024).len(), 30);
        assert_eq!(columns(0, 64), Vec::new());
    }

    #[test]
    fn sixteen_members_keep_the_line_chart() {
        let doc = many_doc(16, 5);
        assert!(Members::of(&doc, &doc.workers_per_second().unwrap()).is_none());
        let svg = crate::report::plot::run_svg(&doc).unwrap();
        assert!(svg.contains("over time, per worker"));
        assert!(model(&many_doc(17, 5)).rows.len() == 17);
    }
}
