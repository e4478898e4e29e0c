//! CSV: one row per worker, per target and the total, with units in the
//! headers; in a mixed pattern, each followed by its reads and its writes
//! apart (`direction` `read`, `write`; `all` for the combined row).

use crate::analysis::histogram::LatencySummary;
use crate::document::run::{DirectionsDoc, RunDocument};

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
    let mut row = |scope: &str,
                   id: String,
                   target: &str,
                   cpu: String,
                   bytes: u64,
                   ios: u64,
                   bps: f64,
                   iops: f64,
                   l: &Option<LatencySummary>,
                   usr: f64,
                   sys: f64,
                   errors: u64,
                   short: u64,
                   secs: f64,
                   split: Option<&DirectionsDoc>| {
        let mut r = vec![
            scope.to_string(),
            id,
            target.to_string(),
            cpu,
            bytes.to_string(),
            ios.to_string(),
            format!("{secs:.6}"),
            format!("{bps:.1}"),
            format!("{:.3}", bps / 1e6),
            format!("{iops:.1}"),
        ];
        r.extend(lat(l));
        r.extend([
            format!("{usr:.6}"),
            format!("{sys:.6}"),
            errors.to_string(),
            short.to_string(),
            doc.interrupted.to_string(),
            "all".into(),
        ]);
        w.write_record(&r).expect("writing to memory does not fail");
        // Reads and writes apart: their own figures; CPU, errors blank.
        for (name, d) in split
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
        row(
            "worker",
            wk.id.to_string(),
            &wk.target,
            wk.cpu.map(|c| c.to_string()).unwrap_or_default(),
            wk.bytes,
            wk.ios,
            wk.bytes_per_sec,
            wk.iops,
            &wk.latency_ns,
            wk.cpu_usr_sec,
            wk.cpu_sys_sec,
            wk.errors,
            wk.short_ios,
            wk.seconds,
            wk.by_direction.as_ref(),
        );
    }
    for t in &doc.targets {
        row(
            "target",
            t.index.to_string(),
            &t.path,
            String::new(),
            t.bytes,
            t.ios,
            t.bytes_per_sec,
            t.iops,
            &t.latency_ns,
            t.cpu_usr_sec,
            t.cpu_sys_sec,
            t.errors,
            t.short_ios,
            t.seconds,
            t.by_direction.as_ref(),
        );
    }
    let t = &doc.total;
    row(
        "total",
        String::new(),
        "",
        String::new(),
        t.bytes,
        t.ios,
        t.bytes_per_sec,
        t.iops,
        &t.latency_ns,
        t.cpu_usr_sec,
        t.cpu_sys_sec,
        t.errors,
        t.short_ios,
        t.seconds,
        t.by_direction.as_ref(),
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
        assert_eq!(total[4].parse::<u64>().unwrap(), doc.total.bytes);
        let sum: u64 = rows
            .iter()
            .filter(|r| &r[0] == "worker")
            .map(|r| r[4].parse::<u64>().unwrap())
            .sum();
        assert_eq!(sum, doc.total.bytes);
        // A target path with a comma survives quoting.
        assert!(rows.iter().any(|r| r[2].contains(',')));
    }
}
