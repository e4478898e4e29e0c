//! `/proc/mdstat`'s progress lines: how far each md array's resync
//! (recovery, resync, check, repair, reshape) is now.
//!
//! Not `md/sync_completed`: md moves that on only every sixteenth of the
//! array or every few minutes (seen in the lab: "16144 / 129024" for four
//! seconds while /proc/mdstat's "(2176/64512)" went to "(8192/64512)"), so
//! over a window of seconds it reads as no progress at all. The progress
//! line counts the blocks done as the resync does them.

use std::fs;
use std::io::Read;
use std::path::Path;

/// The most of /proc/mdstat read: about 300 bytes an array, so thousands of
/// arrays fit; a larger one is cut there (an array past it is not seen).
const MDSTAT_MAX: u64 = 4 << 20;

/// An array's resync as /proc/mdstat shows it at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// `recovery`, `resync`, `check`, `repair` or `reshape`.
    pub action: String,
    /// KiB done and in all, per member device (md's 1 KiB blocks).
    pub done_kib: u64,
    pub total_kib: u64,
}

/// The progress of array `name` (a kernel name: `md0`) in /proc/mdstat's
/// `text`: its block is its `name : ...` line and the indented lines
/// after it. None when it runs none (or waits: `resync=DELAYED`).
pub fn parse_mdstat(text: &str, name: &str) -> Option<Progress> {
    let mut lines = text.lines();
    lines.find(|l| {
        l.split_once(" : ")
            .is_some_and(|(n, _)| n.trim_end() == name)
    })?;
    for l in lines.take_while(|l| l.starts_with(char::is_whitespace) && !l.trim().is_empty()) {
        if let Some(p) = progress_of(l) {
            return Some(p);
        }
    }
    None
}

/// A progress line: `[==>....]  recovery = 12.5% (8192/64512) finish=...`.
fn progress_of(line: &str) -> Option<Progress> {
    let (before, after) = line.split_once(" = ")?;
    let action = before.split_whitespace().last()?;
    if !matches!(
        action,
        "recovery" | "resync" | "check" | "repair" | "reshape"
    ) {
        return None;
    }
    let inner = after.split_once('(')?.1.split_once(')')?.0;
    let (done, total) = inner.split_once('/')?;
    let done_kib = done.trim().parse().ok()?;
    let total_kib: u64 = total.trim().parse().ok()?;
    (total_kib > 0).then(|| Progress {
        action: action.to_string(),
        done_kib,
        total_kib,
    })
}

/// Array `name`'s resync as /proc/mdstat (under `proc`) shows it now.
pub fn progress(proc: &Path, name: &str) -> Option<Progress> {
    parse_mdstat(&read_mdstat(proc)?, name)
}

/// /proc/mdstat under `proc`, at most [`MDSTAT_MAX`] bytes of it.
pub(crate) fn read_mdstat(proc: &Path) -> Option<String> {
    let mut s = String::new();
    let f = fs::File::open(proc.join("mdstat")).ok()?;
    let mut bytes = Vec::new();
    f.take(MDSTAT_MAX).read_to_end(&mut bytes).ok()?;
    s.push_str(&String::from_utf8_lossy(&bytes));
    Some(s)
}

/// /proc/mdstat as the lab's kernel (6.1) wrote it, a RAID5 of 4
/// recovering member 1, beside a clean RAID1 and a delayed resync.
#[cfg(test)]
pub(crate) const MDSTAT: &str = "Personalities : [raid6] [raid5] [raid4] [raid1]
md10 : active raid1 loop5[1] loop4[0]
      65472 blocks super 1.2 [2/2] [UU]
      resync=DELAYED

md0 : active raid5 loop1[4] loop3[3] loop2[2] loop0[0]
      193536 blocks super 1.2 level 5, 64k chunk, algorithm 2 [4/3] [U_UU]
      [==>..................]  recovery = 12.5% (8192/64512) finish=0.4min speed=2048K/sec
      
md1 : active raid1 loop7[1] loop6[0]
      65472 blocks super 1.2 [2/2] [UU]
      
unused devices: <none>
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_of_the_named_array_is_read_and_no_other() {
        assert_eq!(
            parse_mdstat(MDSTAT, "md0"),
            Some(Progress {
                action: "recovery".into(),
                done_kib: 8192,
                total_kib: 64512
            })
        );
        // md1 is clean, md10 waits (DELAYED): neither resyncs now.
        assert_eq!(parse_mdstat(MDSTAT, "md1"), None);
        assert_eq!(parse_mdstat(MDSTAT, "md10"), None);
        // "md" is no array: a prefix of a name is not the name.
        assert_eq!(parse_mdstat(MDSTAT, "md"), None);
        assert_eq!(parse_mdstat(MDSTAT, "md2"), None);
    }

    #[test]
    fn each_action_is_read_and_a_mangled_line_is_none() {
        for action in ["resync", "check", "repair", "reshape"] {
            let t = format!("md3 : active raid6 a[0]\n      [>...]  {action} =  0.1% (5/100) finish=1min speed=1K/sec\n");
            assert_eq!(parse_mdstat(&t, "md3").unwrap().action, action);
        }
        for bad in [
            "md3 : active\n      [>..]  recovery = 1% (x/100)\n",
            "md3 : active\n      [>..]  recovery = 1% (5/0)\n",
            "md3 : active\n      [>..]  rebuild = 1% (5/100)\n",
            "md3 : active\n      [>..]  recovery = 1% 5/100\n",
            "md3 : active\n",
        ] {
            assert_eq!(parse_mdstat(bad, "md3"), None, "{bad}");
        }
    }
}
