//! Every JSON document's bytes (schemas: `docs/json.md`): pretty-printed,
//! one trailing newline. The one JSON writer of the tool.

use serde::Serialize;

pub fn render<T: Serialize>(doc: &T) -> Vec<u8> {
    // Documents are plain data (strings, numbers, maps with string keys):
    // serializing them cannot fail.
    let mut v = serde_json::to_vec_pretty(doc).expect("a document serializes");
    v.push(b'\n');
    escape_controls(v)
}

/// serde escapes C0 controls in strings but writes DEL, C1 controls (U+0080
/// to U+009F: a CSI among them) and invisible characters raw: they become
/// `\u00XX` escapes here, so a document printed on a terminal cannot drive
/// it, while its strings still parse back to the real text (the contract).
/// Outside strings a JSON document holds only printable ASCII.
pub fn escape_controls(json: Vec<u8>) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(&json) else {
        return json;
    };
    // C0 controls: serde escaped those in strings; outside them, newlines.
    let raw = |c: char| c >= '\u{7f}' && crate::base::error::hostile(c);
    if !text.chars().any(raw) {
        return json;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            // JSON's \uXXXX is UTF-16: a character beyond the BMP (a tag
            // character) is its surrogate pair.
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{:04x}", u));
            }
        } else {
            out.push(c);
        }
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::run::RunDocument;
    use crate::report::fixtures::sample_doc;

    #[test]
    fn round_trips() {
        let doc = sample_doc();
        let back: RunDocument = serde_json::from_slice(&render(&doc)).unwrap();
        assert_eq!(back, doc);
        let v: serde_json::Value = serde_json::from_slice(&render(&doc)).unwrap();
        assert_eq!(v["schema_version"], 1);
        assert!(v["total"]["latency_ns"]["p99_9"].is_u64());
    }

    #[test]
    fn tag_characters_beyond_the_bmp_are_escaped_as_surrogate_pairs_and_parse_back() {
        let name = "t\u{e0041}\u{61c}\u{2028}x";
        let bytes = render(&serde_json::json!({ "path": name }));
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(text.contains("\\udb40\\udc41"), "{text}");
        assert!(
            !text
                .chars()
                .any(|c| c != '\n' && crate::base::error::hostile(c)),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["path"], name);
    }

    #[test]
    fn del_and_c1_controls_are_escaped_and_parse_back() {
        let name = "t\u{1b}[31m\u{7f}\u{9b}2J\u{202e}é";
        let bytes = render(&serde_json::json!({ "path": name }));
        assert!(!std::str::from_utf8(&bytes)
            .unwrap()
            .chars()
            .any(|c| c.is_control() && c != '\n'));
        let back: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back["path"], name);
    }
}
