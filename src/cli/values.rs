//! How the command line names the domain's enums: clap's [`ValueEnum`] for
//! `--rw`, `--live-format` and `--hugepages`, implemented here so that the
//! layers below `cli` (`measure`, `engine`) never name clap. The names are
//! the ones the JSON uses; each help line is what `--help` lists beside it.

use clap::builder::PossibleValue;
use clap::ValueEnum;

use crate::engine::buffer::HugePages;
use crate::measure::config::{LiveFormat, RwMode};

impl ValueEnum for RwMode {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            RwMode::Read,
            RwMode::Write,
            RwMode::Randread,
            RwMode::Randwrite,
            RwMode::Randrw,
            RwMode::Rw,
            RwMode::Trim,
            RwMode::Randtrim,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            RwMode::Read => "Sequential reads",
            RwMode::Write => "Sequential writes (destroys data on the target)",
            RwMode::Randread => "Random reads",
            RwMode::Randwrite => "Random writes (destroys data on the target)",
            RwMode::Randrw => "Random reads and writes; --mix sets the read share",
            RwMode::Rw => "Sequential reads and writes; --mix sets the read share (each direction in order from the region's start, as fio's rw=readwrite)",
            RwMode::Trim => "Sequential trims: BLKDISCARD on a block device, a punched hole (fallocate) on a file (destroys data on the target)",
            RwMode::Randtrim => "Random trims (destroys data on the target)",
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}

impl ValueEnum for crate::device::scratch::CreateLayout {
    fn value_variants<'a>() -> &'a [Self] {
        use crate::device::scratch::CreateLayout;
        &[
            CreateLayout::Fill,
            CreateLayout::Sparse,
            CreateLayout::Allocate,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        use crate::device::scratch::CreateLayout;
        let help = match self {
            CreateLayout::Fill => "Every byte written with random data",
            CreateLayout::Sparse => "Its size set, nothing written or allocated (all holes)",
            CreateLayout::Allocate => "Its blocks allocated (fallocate), none written",
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}

impl ValueEnum for LiveFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &[LiveFormat::Jsonl, LiveFormat::Csv]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            LiveFormat::Jsonl => PossibleValue::new("jsonl").help("One JSON object per line"),
            LiveFormat::Csv => PossibleValue::new("csv")
                .help("A header line, then one comma-separated line per line of JSONL"),
        })
    }
}

impl ValueEnum for HugePages {
    fn value_variants<'a>() -> &'a [Self] {
        &[HugePages::Auto, HugePages::On, HugePages::Off]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            HugePages::Auto => PossibleValue::new("auto").help(
                "Huge pages for buffers of 128 KiB or more when the system gives them, else 4 KiB pages, silently",
            ),
            HugePages::On => PossibleValue::new("on").help("Huge pages or refuse to run"),
            HugePages::Off => PossibleValue::new("off").help("4 KiB pages"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant is listed once and parses back from its name: the
    /// hand-written lists cannot drift from the enums without this failing.
    #[test]
    fn every_value_round_trips_through_its_name() {
        fn check<T: ValueEnum + PartialEq + std::fmt::Debug>() {
            for v in T::value_variants() {
                let name = v
                    .to_possible_value()
                    .expect("not hidden")
                    .get_name()
                    .to_string();
                assert_eq!(T::from_str(&name, false).as_ref(), Ok(v), "{name}");
            }
        }
        check::<RwMode>();
        check::<LiveFormat>();
        check::<HugePages>();
        check::<crate::device::scratch::CreateLayout>();
        assert_eq!(RwMode::value_variants().len(), 8);
    }
}
