//! A run over many disks, by the host adapter each is behind (the target's
//! `adapter`): one line per controller with its targets' rate together
//! and their spread, the slowest named, so that a table summarised past
//! `--rows` still shows which controller holds back which disks.

use std::collections::BTreeMap;

use crate::base::error::show_text;
use crate::base::units::mb_per_sec;
use crate::document::run::{RunDocument, TargetDoc};

/// The lines, empty unless the targets are behind at least two adapters.
pub fn lines(doc: &RunDocument) -> String {
    let mut by: BTreeMap<&str, Vec<&TargetDoc>> = BTreeMap::new();
    let mut none = 0usize;
    for t in &doc.targets {
        match t.adapter() {
            Some(a) => by.entry(a).or_default().push(t),
            None => none += 1,
        }
    }
    if by.len() < 2 {
        return String::new();
    }
    let mut out = format!(
        "by controller (the host adapter each target's disk is behind; MB/s = 10^6 B/s, each target over its own time){}:\n",
        if none > 0 {
            format!(", {none} target(s) behind none")
        } else {
            String::new()
        }
    );
    for (adapter, ts) in by {
        let mut rates: Vec<(f64, &str)> = ts
            .iter()
            .map(|t| (t.figures.bytes_per_sec, t.path.as_str()))
            .collect();
        rates.sort_by(|a, b| a.0.total_cmp(&b.0));
        let sum: f64 = rates.iter().map(|r| r.0).sum();
        let median = rates[rates.len() / 2].0;
        let (low, slowest) = rates[0];
        out.push_str(&format!(
            "  {}: {} target(s), {:.1} MB/s in all; each {:.1} to {:.1}, median {:.1}; slowest {}\n",
            show_text(adapter),
            rates.len(),
            mb_per_sec(sum),
            mb_per_sec(low),
            mb_per_sec(rates[rates.len() - 1].0),
            mb_per_sec(median),
            show_text(slowest)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_summed_per_controller_with_the_slowest_named() {
        let mut doc = crate::report::fixtures::many_doc(6, 2);
        assert_eq!(lines(&doc), "", "no adapter: no lines");
        for (i, t) in doc.targets.iter_mut().enumerate() {
            t.adapter = Some(Some(
                if i < 3 {
                    "0000:00:04.0"
                } else {
                    "0000:00:05.0\n"
                }
                .into(),
            ));
            t.figures.bytes_per_sec = (10 + i) as f64 * 1e6;
        }
        let l = lines(&doc);
        let rows: Vec<&str> = l.lines().collect();
        assert_eq!(rows.len(), 3, "{l}");
        assert!(rows[1].starts_with("  0000:00:04.0: 3 target(s), 33.0 MB/s in all; each 10.0 to 12.0, median 11.0; slowest "), "{l}");
        assert!(
            rows[2].starts_with("  0000:00:05.0\\u{a}: 3 target(s)"),
            "escaped: {l}"
        );
        // One adapter for all: nothing to tell apart.
        for t in &mut doc.targets {
            t.adapter = Some(Some("0000:00:04.0".into()));
        }
        assert_eq!(lines(&doc), "");
    }
}
