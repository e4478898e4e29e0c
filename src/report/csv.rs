//! CSV: one row per worker, per target and the total, with units in the
//! headers; in a mixed pattern, each followed by its reads and its writes
//! apart (`direction` `read`, `write`; `all` for the combined row).

use crate::analysis::histogram::LatencySummary;
use crate::document::run::{Figures, RunDocument};

const HEADER: [&str; 21] = [
    "scope",
    "id",
    "target",
    "cpu",
    "bytes",
    "ios",
    "seconds",
    "bytes_per_sec",
    "mb_per_sec",
    "iops",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_max_ns",
    "cpu_usr_sec",
    "cpu_sys_sec",
    "errors",
    "short_ios",
    "interrupted",
    "direction",
];

pub fn render(doc: &RunDocument) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER)
        .expect("writing to memory does not fail");
    let lat = |l: &Option<LatencySummary>| -> [String; 5] {
        match l {
            Some(l) => [
                format!("{:.0}", l.mean),
                l.p50.to_string(),
                l.p99.to_string(),
                l.p99_9.to_string(),
                l.max.to_string(),
            ],
            None => Default::default(),
        }
    };
    // One row of an entry's figures, then its reads and writes apart.
    let mut row = |scope: &str, id: String, target: &str, cpu: String, f: &Figures| {
        let mut r = vec![
            scope.to_string(),
            id,
            // A spreadsheet takes a quoted newline, a terminal (`--csv -`)
            // shows it as a line of its own: escaped as the table escapes it.
            crate::base::error::show_text(target).into_owned(),
            cpu,
            f.bytes.to_string(),
            f.ios.to_string(),
            format!("{:.6}", f.seconds),
            format!("{:.1}", f.bytes_per_sec),
            format!("{:.3}", f.bytes_per_sec / 1e6),
            format!("{:.1}", f.iops),
        ];
        r.extend(lat(&f.latency_ns));
        r.extend([
            format!("{:.6}", f.cpu_usr_sec),
            format!("{:.6}", f.cpu_sys_sec),
            f.errors.to_string(),
            f.short_ios.to_string(),
            doc.interrupted.to_string(),
            "all".into(),
        ]);
        w.write_record(&r).expect("writing to memory does not fail");
        // Reads and writes apart: their own figures; CPU, errors blank.
        for (name, d) in f
            .by_direction
            .iter()
            .flat_map(|s| [("read", &s.reads), ("write", &s.writes)])
        {
            let mut r = r.clone();
            r[4] = d.bytes.to_string();
            r[5] = d.ios.to_string();
            r[7] = format!("{:.1}", d.bytes_per_sec);
            r[8] = format!("{:.3}", d.bytes_per_sec / 1e6);
            r[9] = format!("{:.1}", d.iops);
            r.splice(10..15, lat(&d.latency_ns));
            for c in &mut r[15..19] {
                c.clear();
            }
            r[20] = name.into();
            w.write_record(&r).expect("writing to memory does not fail");
        }
    };
    for wk in &doc.workers {
        let cpu = wk.cpu.map(|c| c.to_string()).unwrap_or_default();
        row("worker", wk.id.to_string(), &wk.target, cpu, &wk.figures);
    }
    for t in &doc.targets {
        row(
            "target",
            t.index.to_string(),
            &t.path,
            String::new(),
            &t.figures,
        );
    }
    row(
        "total",
        String::new(),
        "",
        String::new(),
        &doc.total.figures,
    );
    w.into_inner().expect("flushing to memory does not fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::sample_doc;

    #[test]
    fn parses_back_with_one_row_per_worker_target_and_total() {
        let doc = sample_doc();
        let bytes = render(&doc);
        let mut r = csv::Reader::from_reader(bytes.as_slice());
        assert_eq!(r.headers().unwrap().len(), HEADER.len());
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(rows.len(), doc.workers.len() + doc.targets.len() + 1);
        let total = rows.last().unwrap();
        assert_eq!(&total[0], "total");
        assert_eq!(total[4].parse::<u64>().unwrap(), doc.total.figures.bytes);
        let sum: u64 = rows
            .iter()
            .filter(|r| &r[0] == "worker")
            .map(|r| r[4].parse::<u64>().unwrap())
            .sum();
        assert_eq!(sum, doc.total.figures.bytes);
        // A target path with a comma survives quoting.
        assert!(rows.iter().any(|r| r[2].contains(',')));
    }
}
