//! The sample of reads that came back all zeros (`analysis::zeros`), said
//! per target beside its figure ([`Warning::ZeroReads`]), and which
//! figures it disowns: those of targets whose sampled reads were mostly
//! zeros with no layer check vouching that the zeros were stored. `run`
//! exits [`crate::base::error::EXIT_ZERO_READS`] for them, and `compare`
//! and `advise` refuse to call them a member's speed, unless `--allow-holes`.

use crate::analysis::zeros::mostly_zeros;
use crate::base::warning::Warning;

use super::RunDocument;

impl RunDocument {
    /// One warning per target whose sampled reads were mostly zeros
    /// (half or more of at least 16); `stored` gives, per target, the
    /// layer a check found holding its whole region as written data.
    pub fn zero_reads(&self, stored: &[Option<String>]) -> Vec<Warning> {
        self.targets
            .iter()
            .filter_map(|t| {
                let (sampled, zeros) = self
                    .workers
                    .iter()
                    .filter(|w| w.target_index == t.index)
                    .fold((0, 0), |(s, z), w| {
                        (
                            s + w.sampled_reads.unwrap_or(0),
                            z + w.zero_reads.unwrap_or(0),
                        )
                    });
                mostly_zeros(sampled, zeros)?;
                Some(Warning::ZeroReads {
                    path: t.path.clone(),
                    sampled,
                    zeros,
                    stored: stored.get(t.index).cloned().flatten(),
                })
            })
            .collect()
    }

    /// The sentences of the targets whose figure the zero sample
    /// disowns (mostly zeros, no layer vouching for them), grouped or not.
    pub fn zero_figures(&self) -> Vec<String> {
        fn walk(w: &Warning, out: &mut Vec<String>) {
            match w {
                Warning::ZeroReads { stored: None, .. } => out.push(w.to_string()),
                Warning::Grouped { members, .. } => members.iter().for_each(|m| walk(m, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        self.warnings.iter().for_each(|w| walk(w, &mut out));
        out
    }
}
