//! The one-file HTML report (`--html`, `stripebench report`): a pure
//! function of a run, sweep, compare, merge or findings document. The file stands
//! alone: CSS in a `<style>` element, plots as inline SVG, no script, and a
//! Content-Security-Policy that lets the browser fetch nothing, so it reads
//! the same mailed, offline or with JavaScript off. Every text that comes
//! from the document (target paths, host names, warnings) is escaped here
//! ([`esc`]); plotters escapes what it draws into the SVGs.
//!
//! No template engine: the pages are a few tables, lists and plots, and a
//! small builder ([`page::Page`]) keeps the escaping in one place.

mod advise;
mod charts;
mod history;
mod kinds;
mod page;
mod run;

use anyhow::Result;

use crate::document::load::AnyDocument;

pub use advise::findings;
pub use history::history;
pub use kinds::{compare, merge, sweep};
pub use page::esc;
pub use run::run;

/// The report of any document `stripebench report` reads.
pub fn render(doc: &AnyDocument) -> Result<String> {
    match doc {
        AnyDocument::Run(d) => run(d),
        AnyDocument::Sweep(d) => sweep(d),
        AnyDocument::Compare(d) => compare(d),
        AnyDocument::Merge(d) => merge(d),
        AnyDocument::Findings(d) => findings(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::sample_doc;

    #[test]
    fn text_from_the_document_is_escaped() {
        assert_eq!(esc("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
        let mut doc = sample_doc();
        let evil = "/tmp/<b>x&y\"z</b>";
        for t in &mut doc.targets {
            t.path = evil.into();
        }
        for w in &mut doc.workers {
            w.target = evil.into();
        }
        doc.host.hostname = "<script>alert(1)</script>".into();
        doc.warnings.push(crate::base::warning::Warning::Text(
            "<img src=x onerror=alert(1)>".into(),
        ));
        let html = run(&doc).unwrap();
        assert!(!html.contains("<b>x"), "raw target name in the page");
        assert!(!html.contains("<script"), "a script element in the page");
        assert!(!html.contains("<img"), "raw warning in the page");
        assert!(html.contains("/tmp/&lt;b&gt;x&amp;y&quot;z&lt;/b&gt;"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!html.contains("http://") && !html.contains("https://"));
    }

    #[test]
    fn a_run_report_has_its_table_plots_and_figures() {
        let doc = sample_doc();
        let html = run(&doc).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.trim_end().ends_with("</html>"));
        // The TOTAL row with the document's MB/s, as the text table prints it.
        let total = format!("{:.1}", doc.total.figures.bytes_per_sec / 1e6);
        let row = html
            .split("<tr")
            .find(|r| r.contains(">TOTAL<"))
            .expect("a TOTAL row");
        assert!(row.contains(&format!(">{total}<")), "{row}");
        // Two plots at least: the time series and the latency percentiles.
        assert!(html.matches("<svg").count() >= 2);
        // The page parses as XML apart from the doctype: every tag closed.
        let body = html.trim_start_matches("<!DOCTYPE html>");
        roxmltree::Document::parse(body).expect("well-formed markup");
    }
}
