//! The JSON document (schema: `docs/json.md`).

use crate::document::run::RunDocument;

pub fn render(doc: &RunDocument) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(doc).expect("the document serializes");
    v.push(b'\n');
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::table::tests::sample_doc;

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
