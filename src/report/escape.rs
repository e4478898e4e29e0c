//! Text for markup: the one escaper the HTML page and the SVG charts share.

/// Escapes text for HTML or SVG element content and quoted attribute
/// values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Text from outside, fit for SVG and HTML markup: control characters
/// shown ([`crate::base::error::show_text`]), markup characters escaped.
pub fn xml(text: &str) -> String {
    esc(&crate::base::error::show_text(text))
}
