//! Whether a compare phase's figures can be used, from its counts: a phase
//! with I/O errors or workers that stopped on them is *failed*; one whose
//! workers completed no I/O, or only a handful, is *thin*; else *ok*.
//! `document::compare` gathers the counts from a run document, says what
//! is wrong in words, and writes the status into the document.

/// A worker that completed fewer I/Os than this in its window has no rate
/// worth the name: its phase is thin.
pub const MIN_WORKER_IOS: u64 = 5;

/// What a phase's figures are good for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every worker ran without error and completed enough I/O.
    Ok,
    /// Some worker completed no I/O or too few: not a rate.
    Thin,
    /// I/O errors, hung I/O, or workers stopped on errors.
    Failed,
}

/// The status, and the workers behind a thin one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    pub status: Status,
    /// Workers that completed no I/O.
    pub idle: usize,
    /// Workers that completed some, but fewer than [`MIN_WORKER_IOS`].
    pub few: usize,
}

/// The rule: `errors` (I/O, flush or hung I/O errors in the run),
/// `stopped` (workers that stopped on errors), the run's completed I/Os and
/// each worker's.
pub fn judge(errors: bool, stopped: usize, total_ios: u64, worker_ios: &[u64]) -> Health {
    let idle = worker_ios.iter().filter(|&&n| n == 0).count();
    let few = worker_ios
        .iter()
        .filter(|n| (1..MIN_WORKER_IOS).contains(n))
        .count();
    let failed = errors || stopped > 0;
    let thin = total_ios == 0 || idle > 0 || few > 0;
    let status = if failed {
        Status::Failed
    } else if thin {
        Status::Thin
    } else {
        Status::Ok
    };
    Health { status, idle, few }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_fail_a_phase_before_too_few_ios_thin_it() {
        let ok = judge(false, 0, 100, &[50, 50]);
        assert_eq!(ok.status, Status::Ok);
        let thin = judge(false, 0, 52, &[50, 2, 0]);
        assert_eq!((thin.status, thin.idle, thin.few), (Status::Thin, 1, 1));
        assert_eq!(judge(false, 0, 0, &[]).status, Status::Thin);
        assert_eq!(judge(true, 0, 52, &[50, 2]).status, Status::Failed);
        assert_eq!(judge(false, 1, 100, &[50, 50]).status, Status::Failed);
        // A worker at the minimum has a rate.
        assert_eq!(
            judge(false, 0, 10, &[MIN_WORKER_IOS, MIN_WORKER_IOS]).status,
            Status::Ok
        );
    }
}
