//! Layer `report`: renderers (table, CSV, JSON, SVG, the one-file HTML page
//! in `html/`, the diff, the dry run, the live line and the metrics text)
//! as pure functions of documents: a document in, bytes or a string out.
//! No file, no clock, no descriptor: where the bytes go is `output`'s.
//!
//! [`FORMATS`] registers the document formats a measuring command writes
//! (`--json`, `--csv`, `--plot`, `--html`): each entry names its flag, the
//! document kinds it renders and its render function. The command line
//! (`cli::run_args`) builds its flags from this table and `output::Outputs`
//! writes whatever it lists, so a new format is its renderer file and one
//! entry here.
//!
//! May import `document` and the layers below it; never `output`, `cli` or
//! `commands`. Names no thread, clock, file or syscall.

pub mod advise;
pub mod chart;
pub mod compare;
pub mod csv;
pub mod diff;
pub mod draw;
pub mod dry_run;
pub mod escape;
pub mod fio_json;
pub mod fio_log;
#[cfg(test)]
pub mod fixtures;
pub mod format;
pub mod groups;
pub mod histogram;
pub mod history;
pub mod html;
pub mod json;
pub mod latency_search;
pub mod live;
pub mod members;
pub mod merge;
pub mod plan;
pub mod plot;
pub mod rebuild;
pub mod resync;
pub mod sweep;
pub mod table;
pub mod topology;

pub use format::{Doc, Format, Kind, PathCheck, Rendered};

/// The formats of the measuring commands, in the order `--help` lists them
/// and the order they are written in.
pub static FORMATS: &[Format] = &[
    Format {
        option: "--json",
        value_name: "PATH",
        help: "Write the JSON document (schema in docs/json.md) to PATH; `-` for stdout (the table then goes to stderr)",
        kinds: &[Kind::Run, Kind::Sweep, Kind::Compare, Kind::Plan, Kind::Latency, Kind::Merge, Kind::Diff, Kind::Findings, Kind::History],
        check_path: None,
        per_point: true,
        announce: false,
        render: render::json,
    },
    Format {
        option: "--csv",
        value_name: "PATH",
        help: "Write one CSV row per worker, per target and the total to PATH; `-` for stdout",
        kinds: &[Kind::Run, Kind::Sweep],
        check_path: None,
        per_point: true,
        announce: false,
        render: render::csv,
    },
    Format {
        option: "--plot",
        value_name: "FILE.svg",
        help: "Draw an SVG: for run, MB/s over time per worker and the latency histogram per target (from 17 targets or workers: a heatmap of MB/s, a row per member sorted by rate, and the members sorted with the slow-member fence); for sweep, throughput and p99 against the points (a sweep over rate: p50, p99, p99.9 against delivered MB/s)",
        kinds: &[Kind::Run, Kind::Sweep, Kind::Plan],
        check_path: Some(plot::check_path),
        per_point: false,
        announce: true,
        render: render::plot,
    },
    Format {
        option: "--fio-json",
        value_name: "PATH",
        help: "Write the run in fio's JSON output form (fio 3.x `--output-format=json`: a job per worker, named as --print-fio names them, with read/write sections, clat percentiles and disk_util) to PATH, for the tools that read fio's; what differs from fio's own is in its `stripebench.notes`",
        kinds: &[Kind::Run],
        check_path: None,
        per_point: false,
        announce: false,
        render: render::fio_json,
    },
    Format {
        option: "--html",
        value_name: "PATH",
        help: "Write a one-file HTML report to PATH (`-` for stdout): the configuration, the table, device counters, warnings, each target's storage stack, throughput over time and latency percentile plots. Self-contained: inline CSS and SVG, no script, nothing fetched",
        kinds: &[Kind::Run, Kind::Sweep, Kind::Compare, Kind::Merge, Kind::History],
        check_path: None,
        per_point: false,
        announce: false,
        render: render::html,
    },
];

/// The registered formats' render functions: each dispatches on the kinds
/// its entry lists.
mod render {
    use super::{Doc, Rendered};
    use anyhow::Result;

    fn text(bytes: Vec<u8>) -> Rendered {
        Rendered::Text(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn not_listed(flag: &str, doc: Doc) -> anyhow::Error {
        anyhow::anyhow!(
            "internal error: --{flag} does not render a {:?} document; please report it",
            doc.kind()
        )
    }

    pub fn json(doc: Doc) -> Result<Rendered> {
        Ok(Rendered::Bytes(match doc {
            Doc::Run(d) => super::json::render(d),
            Doc::Sweep(d) => super::json::render(d),
            Doc::Compare(d) => super::json::render(d),
            Doc::Plan(d) => super::json::render(d),
            Doc::Latency(d) => super::json::render(d),
            Doc::Merge(d) => super::json::render(d),
            Doc::Diff(d) => super::json::render(d),
            Doc::History(d) => super::json::render(d),
            Doc::Findings(d) => super::json::render(d),
        }))
    }

    pub fn csv(doc: Doc) -> Result<Rendered> {
        match doc {
            Doc::Run(d) => Ok(text(super::csv::render(d))),
            Doc::Sweep(d) => Ok(text(super::sweep::csv(d))),
            _ => Err(not_listed("csv", doc)),
        }
    }

    pub fn plot(doc: Doc) -> Result<Rendered> {
        match doc {
            Doc::Run(d) => super::plot::run_svg(d).map(Rendered::Text),
            // A sweep that finished no point has nothing to draw.
            Doc::Sweep(d) if d.points.is_empty() => Ok(Rendered::Nothing),
            Doc::Sweep(d) => super::plot::sweep_svg(d).map(Rendered::Text),
            Doc::Plan(d) => super::plot::plan_svg(d).map(Rendered::Text),
            _ => Err(not_listed("plot", doc)),
        }
    }

    pub fn fio_json(doc: Doc) -> Result<Rendered> {
        match doc {
            Doc::Run(d) => Ok(Rendered::Bytes(super::fio_json::render(d))),
            _ => Err(not_listed("fio-json", doc)),
        }
    }

    pub fn html(doc: Doc) -> Result<Rendered> {
        match doc {
            Doc::Run(d) => super::html::run(d).map(Rendered::Text),
            Doc::Sweep(d) => super::html::sweep(d).map(Rendered::Text),
            Doc::Compare(d) => super::html::compare(d).map(Rendered::Text),
            Doc::Merge(d) => super::html::merge(d).map(Rendered::Text),
            Doc::History(d) => super::html::history(d).map(Rendered::Text),
            _ => Err(not_listed("html", doc)),
        }
    }
}

/// The registered format of `flag`.
pub fn format(flag: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.flag() == flag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_renders_a_fixture_run_to_the_same_bytes_twice() {
        // Pure: the same document gives the same bytes, with no I/O.
        let doc = fixtures::sample_doc();
        for f in FORMATS.iter().filter(|f| f.renders(Kind::Run)) {
            let a = (f.render)(Doc::Run(&doc)).unwrap();
            let b = (f.render)(Doc::Run(&doc)).unwrap();
            assert_eq!(a, b, "{}", f.option);
            assert_ne!(a, Rendered::Nothing, "{}", f.option);
        }
    }

    #[test]
    fn the_json_format_is_the_json_renderer() {
        let doc = fixtures::sample_doc();
        let Rendered::Bytes(b) = render::json(Doc::Run(&doc)).unwrap() else {
            panic!("JSON is bytes")
        };
        assert_eq!(b, json::render(&doc));
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(v["schema_version"], crate::document::run::SCHEMA_VERSION);
    }

    #[test]
    fn the_csv_format_is_the_csv_renderer_as_text() {
        let doc = fixtures::sample_doc();
        let Rendered::Text(t) = render::csv(Doc::Run(&doc)).unwrap() else {
            panic!("CSV is text")
        };
        assert_eq!(t.as_bytes(), &csv::render(&doc)[..]);
        assert!(t.lines().count() > 1, "{t}");
    }

    #[test]
    fn flags_are_unique() {
        for (i, f) in FORMATS.iter().enumerate() {
            assert!(
                FORMATS[..i].iter().all(|g| g.option != f.option),
                "{}",
                f.option
            );
            assert_eq!(f.option, format!("--{}", f.flag()));
        }
    }
}
