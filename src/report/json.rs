//! Every JSON document's bytes (schemas: `docs/json.md`): pretty-printed,
//! one trailing newline. The one JSON writer of the tool.

use serde::Serialize;

pub fn render<T: Serialize>(doc: &T) -> Vec<u8> {
    // Documents are plain data (strings, numbers, maps with string keys):
    // serializing them cannot fail.
    let mut v = serde_json::to_vec_pretty(doc).expect("a document serializes");
    v.push(b'\n');
    v
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
}
