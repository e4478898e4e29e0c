//! The page: its head with the inline CSS, and the few elements the
//! reports are made of (headings, paragraphs, tables, preformatted text),
//! each escaping the text it is given.

use std::fmt::Write;

pub use crate::report::escape::esc;

/// Text with its control characters (but newlines and tabs) shown as
/// `\xNN`: a file's content in a page, where a raw control byte is not
/// well-formed markup and a terminal escape means nothing.
/// A field as one line of a page: [`crate::base::error::show_text`].
fn line(text: &str) -> std::borrow::Cow<'_, str> {
    crate::base::error::show_text(text)
}

pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "\\x{b:02x}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// What a browser may load for the page: nothing but its own inline CSS
/// (inline SVG needs no permission). No script runs, nothing is fetched.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'";

const CSS: &str = "
:root { color-scheme: light; }
body { margin: 0; background: #f4f5f7; color: #1d2330;
  font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 18px 24px 40px; }
h1 { font-size: 22px; margin: 4px 0 2px; }
h2 { font-size: 17px; margin: 26px 0 8px; padding-bottom: 3px; border-bottom: 2px solid #d5dae3; }
h3 { font-size: 15px; margin: 16px 0 6px; }
p { margin: 4px 0; }
.sub { color: #566176; margin-bottom: 10px; }
.lead { background: #fff; border: 1px solid #d5dae3; border-radius: 6px; padding: 8px 12px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px;
  font-weight: 600; background: #e3e8f0; color: #2b3445; margin-right: 6px; }
.badge.bad { background: #fbe3e1; color: #9b1c14; }
table { border-collapse: collapse; background: #fff; margin: 6px 0 10px; font-size: 13px; }
th, td { border: 1px solid #d5dae3; padding: 3px 8px; vertical-align: top; }
th { background: #e9edf3; text-align: left; font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.target td { background: #f3f6fb; font-weight: 600; }
tr.total td { background: #e6eefc; font-weight: 700; border-top: 2px solid #8ea3c7; }
tr.slow td { background: #fdeeee; }
tr.per-target td { background: #f7f9fc; color: #3a4456; }
table.kv th { width: 1%; white-space: nowrap; }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 0 24px; }
pre { background: #fff; border: 1px solid #d5dae3; border-radius: 6px; padding: 8px 12px;
  overflow-x: auto; font-size: 12.5px; margin: 6px 0 10px; }
pre.copy { user-select: all; -webkit-user-select: all; cursor: text; }
ul.notes { list-style: none; padding: 0; margin: 6px 0; }
ul.notes li { background: #fff; border-left: 4px solid #9aa7bd; padding: 4px 10px; margin: 3px 0; }
ul.notes li.warn { border-color: #e0a100; background: #fff9e6; }
ul.notes li.error { border-color: #d22f27; background: #fdeeee; }
figure { margin: 8px 0 14px; background: #fff; border: 1px solid #d5dae3; border-radius: 6px; padding: 6px; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { color: #566176; font-size: 12.5px; padding: 2px 6px; }
ul.legend { list-style: none; margin: 2px 6px; padding: 0; display: flex; flex-wrap: wrap; gap: 2px 18px; font-size: 13px; }
ul.legend li { white-space: nowrap; }
.swatch { display: inline-block; width: 22px; height: 3px; margin: 0 6px 4px 0; vertical-align: middle; }
.swatch.heavy { height: 5px; }
details { margin: 6px 0; }
summary { cursor: pointer; font-weight: 600; }
footer { margin-top: 30px; color: #6b768a; font-size: 12px; }
";

/// A report page being written.
pub struct Page {
    out: String,
}

impl Page {
    /// The head of a page titled `title` (escaped).
    pub fn new(title: &str) -> Page {
        let mut out = String::with_capacity(64 << 10);
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\"/>\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
             <meta name=\"generator\" content=\"stripebench {}\"/>\n\
             <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n",
            env!("CARGO_PKG_VERSION"),
            esc(&crate::base::error::show_text(title))
        );
        Page { out }
    }

    /// Markup made by the caller from escaped parts.
    pub fn raw(&mut self, html: &str) -> &mut Self {
        self.out.push_str(html);
        self
    }

    /// A heading of level 1 to 3.
    pub fn h(&mut self, level: u8, text: &str) -> &mut Self {
        let _ = writeln!(self.out, "<h{level}>{}</h{level}>", esc(&line(text)));
        self
    }

    /// A paragraph of plain text with a CSS class (or none): one line of
    /// source, its fields' newlines shown (a document's hostname is anyone's).
    pub fn p(&mut self, class: &str, text: &str) -> &mut Self {
        let text = esc(&line(text));
        if class.is_empty() {
            let _ = writeln!(self.out, "<p>{text}</p>");
        } else {
            let _ = writeln!(self.out, "<p class=\"{class}\">{text}</p>");
        }
        self
    }

    /// Preformatted text.
    pub fn pre(&mut self, text: &str) -> &mut Self {
        let _ = writeln!(self.out, "<pre>{}</pre>", esc(text.trim_end()));
        self
    }

    /// A table: `head` names the columns; the columns from `first_number`
    /// on are figures (right-aligned); each row may carry a CSS class.
    pub fn table(
        &mut self,
        head: &[String],
        rows: &[(String, Vec<String>)],
        first_number: usize,
    ) -> &mut Self {
        self.out.push_str("<table>\n<thead><tr>");
        for (i, h) in head.iter().enumerate() {
            let class = if i >= first_number {
                " class=\"n\""
            } else {
                ""
            };
            let _ = write!(self.out, "<th{class}>{}</th>", esc(&line(h)));
        }
        self.out.push_str("</tr></thead>\n<tbody>\n");
        for (class, cells) in rows {
            if class.is_empty() {
                self.out.push_str("<tr>");
            } else {
                let _ = write!(self.out, "<tr class=\"{class}\">");
            }
            for (i, c) in cells.iter().enumerate() {
                let class = if i >= first_number {
                    " class=\"n\""
                } else {
                    ""
                };
                let _ = write!(self.out, "<td{class}>{}</td>", esc(&line(c)));
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("</tbody>\n</table>\n");
        self
    }

    /// A two-column table of names and values.
    pub fn kv(&mut self, pairs: &[(String, String)]) -> &mut Self {
        self.out.push_str("<table class=\"kv\">\n");
        for (k, v) in pairs {
            let _ = writeln!(
                self.out,
                "<tr><th>{}</th><td>{}</td></tr>",
                esc(&line(k)),
                esc(&line(v))
            );
        }
        self.out.push_str("</table>\n");
        self
    }

    /// Lines of notes, each styled by what it starts with: warnings,
    /// errors (ERROR, HUNG, BAD) and the rest.
    pub fn notes(&mut self, text: &str) -> &mut Self {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.is_empty() {
            return self;
        }
        self.out.push_str("<ul class=\"notes\">\n");
        for l in lines {
            let t = l.trim_start();
            let class = if t.starts_with("warning") {
                " class=\"warn\""
            } else if ["ERROR", "HUNG", "BAD", "verify"]
                .iter()
                .any(|p| t.starts_with(p))
            {
                " class=\"error\""
            } else {
                ""
            };
            let _ = writeln!(self.out, "<li{class}>{}</li>", esc(t));
        }
        self.out.push_str("</ul>\n");
        self
    }

    /// A plot of [`super::charts`]: its SVG, its legend, its caption.
    pub fn plot(&mut self, plot: &super::charts::Plot, caption: &str) -> &mut Self {
        let mut legend = String::from("<ul class=\"legend\">");
        for (label, c, heavy) in &plot.legend {
            let _ = write!(
                legend,
                "<li><span class=\"swatch{}\" style=\"background: rgb({}, {}, {})\"></span>{}</li>",
                if *heavy { " heavy" } else { "" },
                c.0,
                c.1,
                c.2,
                esc(label)
            );
        }
        legend.push_str("</ul>");
        self.figure_with(&plot.svg, &legend, caption)
    }

    /// An SVG (from plotters) with its caption.
    pub fn figure(&mut self, svg: &str, caption: &str) -> &mut Self {
        self.figure_with(svg, "", caption)
    }

    /// An SVG, markup under it (a legend), and its caption.
    fn figure_with(&mut self, svg: &str, under: &str, caption: &str) -> &mut Self {
        // Inline SVG in HTML needs no namespace; leaving it out keeps the
        // page free of any URL.
        let svg = svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
        let _ = writeln!(
            self.out,
            "<figure>\n{}\n{under}\n<figcaption>{}</figcaption>\n</figure>",
            svg.trim(),
            esc(caption)
        );
        self
    }

    /// The command that wrote the document (`tool.invocation`), as one
    /// shell line that repeats it, and the `--config` file's content.
    pub fn command(&mut self, tool: &crate::document::run::ToolInfo) -> &mut Self {
        self.h(2, "Command");
        let Some(inv) = &tool.invocation else {
            return self.p(
                "",
                "not recorded (a document from before stripebench recorded it)",
            );
        };
        // `command` is shell-quoted ($'\xNN' for control bytes), one line:
        // a document read back may say otherwise, so it is kept to one.
        self.pre(&crate::base::error::show_text(&inv.command));
        if let Some(c) = &inv.config_file {
            let _ = writeln!(
                self.out,
                "<details open=\"open\">\n<summary>--config {}</summary>\n<pre>{}</pre>\n</details>",
                esc(&printable(&c.path)),
                esc(&printable(c.content.trim_end()))
            );
        }
        self
    }

    /// Ends the page, with the command that wrote the document.
    pub fn finish(mut self, tool: &crate::document::run::ToolInfo) -> String {
        self.command(tool);
        let _ = write!(
            self.out,
            "<footer>Written by stripebench {} from its JSON document. One self-contained file: no script, nothing fetched.</footer>\n</main>\n</body>\n</html>\n",
            env!("CARGO_PKG_VERSION")
        );
        self.out
    }
}
