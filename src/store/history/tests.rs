use super::*;
use std::os::unix::fs::PermissionsExt;

fn private_dir() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    t
}

pub(crate) fn entry(key: &str, time: f64, mb: f64, p99_us: u64) -> Entry {
    Entry {
        identity: DiskIdentity {
            key: key.into(),
            kind: IdentityKind::Wwn,
            wwn: key.strip_prefix("wwn:").map(String::from),
            serial: Some(format!("S-{key}")),
            model: Some("M".into()),
            firmware: Some("F1".into()),
        },
        host: "h".into(),
        device: "/dev/sdq".into(),
        time,
        workload: "rw=randread bs=4096".into(),
        label: "randread 4k qd1 direct".into(),
        context: "run".into(),
        bytes_per_sec: mb * 1e6,
        iops: mb * 1e6 / 4096.0,
        p50_ns: Some(p99_us * 500),
        p99_ns: Some(p99_us * 1000),
        p999_ns: Some(p99_us * 2000),
        histogram: "HISTFAAAA".into(),
        ios: Some(1000),
        not_device_speed: None,
    }
}

#[test]
fn a_document_is_recorded_once_and_read_back_by_disk() {
    let t = private_dir();
    let db = t.path().join("h.db");
    let mut s = Store::open(&db, false).unwrap();
    let es = [
        entry("wwn:0x1", 10.0, 100.0, 500),
        entry("wwn:0x2", 10.0, 90.0, 600),
    ];
    assert!(s.record("hash1", Some("/r/a.json"), 11.0, &es).unwrap());
    assert!(
        !s.record("hash1", Some("/r/a.json"), 12.0, &es).unwrap(),
        "idempotent"
    );
    // The same results in an edited document (another hash) are not
    // recorded twice: one result per disk, time, workload and context.
    s.record("hash1-edited", None, 12.0, &es).unwrap();
    assert_eq!(s.entries(None, &[]).unwrap().len(), 2);
    s.record("hash2", None, 21.0, &[entry("wwn:0x1", 20.0, 99.0, 510)])
        .unwrap();
    let all = s.entries(None, &[]).unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[2].time, 20.0);
    let one = s.entries(Some(&["wwn:0x1".to_string()]), &[]).unwrap();
    assert_eq!(one.len(), 2);
    assert_eq!(one[0].identity.serial.as_deref(), Some("S-wwn:0x1"));
    assert_eq!(one[1].p99_ns, Some(510_000));
    assert_eq!(s.find("0x2").unwrap(), vec!["wwn:0x2".to_string()]);
    assert_eq!(s.find("sdq").unwrap().len(), 2);
    // Histograms are read for the disks asked, and only for them.
    assert!(one.iter().all(|e| e.histogram.is_empty()));
    let with = s.entries(None, &["wwn:0x1".to_string()]).unwrap();
    let hist: Vec<(&str, &str)> = with
        .iter()
        .map(|e| (e.identity.key.as_str(), e.histogram.as_str()))
        .collect();
    assert_eq!(
        hist,
        [
            ("wwn:0x1", "HISTFAAAA"),
            ("wwn:0x2", ""),
            ("wwn:0x1", "HISTFAAAA")
        ]
    );
    let mode = std::fs::metadata(&db).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");
}

#[test]
fn two_writers_at_once_both_land() {
    let t = private_dir();
    let db = t.path().join("h.db");
    Store::open(&db, false).unwrap();
    let threads: Vec<_> = (0..2)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut s = Store::open(&db, false).unwrap();
                for i in 0..50 {
                    let key = format!("wwn:0x{w}");
                    s.record(
                        &format!("{w}-{i}"),
                        None,
                        0.0,
                        &[entry(&key, i as f64, 1.0, 1)],
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let s = Store::open_to_read(&db).unwrap();
    assert_eq!(s.entries(None, &[]).unwrap().len(), 100);
}

#[test]
fn a_truncated_or_foreign_file_is_damaged_in_one_line() {
    let t = private_dir();
    let db = t.path().join("h.db");
    let mut s = Store::open(&db, false).unwrap();
    s.record("h", None, 0.0, &[entry("wwn:0x1", 1.0, 1.0, 1)])
        .unwrap();
    drop(s);
    // Checkpointed on close: the database is the file alone.
    let len = std::fs::metadata(&db).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    f.set_len(len / 3).unwrap();
    drop(f);
    let e = match Store::open(&db, false) {
        Err(e) => e,
        Ok(mut s) => s
            .record("h2", None, 0.0, &[entry("wwn:0x1", 2.0, 1.0, 1)])
            .and_then(|_| s.entries(None, &[]).map(|_| false))
            .unwrap_err(),
    };
    let line = e.to_string();
    assert!(matches!(e, StoreError::Damaged { .. }), "{line}");
    assert!(
        !line.contains('\n') && line.contains("move it aside"),
        "{line}"
    );

    std::fs::write(&db, b"not a database at all, just text").unwrap();
    let e = Store::open(&db, false).err().expect("refused");
    assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
}

#[test]
fn a_database_from_a_newer_stripebench_is_refused_untouched() {
    let t = private_dir();
    let db = t.path().join("h.db");
    drop(Store::open(&db, false).unwrap());
    let c = Connection::open(&db).unwrap();
    c.pragma_update(None, "user_version", 99).unwrap();
    drop(c);
    let e = Store::open(&db, false).err().expect("refused");
    assert!(e.to_string().contains("schema 99"), "{e}");
    let missing = Store::open_to_read(&t.path().join("none.db"))
        .err()
        .unwrap();
    assert!(missing.to_string().contains("no history"), "{missing}");
    assert!(!t.path().join("none.db").exists());
}

#[test]
fn a_database_of_schema_1_is_migrated_and_keeps_its_results() {
    // What stripebench 1's schema left: a result with no I/O count.
    let t = private_dir();
    let db = t.path().join("h.db");
    {
        let c = Connection::open(&db).unwrap();
        c.execute_batch(MIGRATIONS[0]).unwrap();
        c.execute_batch(
            "INSERT INTO disks(key, kind) VALUES ('wwn:0x1', 'wwn');
             INSERT INTO documents(hash, recorded) VALUES ('old', 1.0);
             INSERT INTO results(disk, document, host, device, time, workload, label,
                context, bytes_per_sec, iops, p99_ns)
                VALUES (1, 1, 'h', '/dev/sdq', 1.0, 'w', 'l', 'run', 1e6, 244.0, 500000);
             INSERT INTO histograms(result, histogram) VALUES (1, '');
             PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Read first: a reader migrates too (it must not read a schema it
    // does not know), then a writer records one with its count.
    let old = Store::open_to_read(&db)
        .unwrap()
        .entries(None, &[])
        .unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!((old[0].ios, old[0].p99_ns), (None, Some(500_000)));
    let mut s = Store::open(&db, false).unwrap();
    s.record("new", None, 3.0, &[entry("wwn:0x1", 2.0, 1.0, 1)])
        .unwrap();
    let all = s.entries(None, &[]).unwrap();
    assert_eq!(
        all.iter().map(|e| e.ios).collect::<Vec<_>>(),
        [None, Some(1000)]
    );
    let v: i64 = s
        .conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, SCHEMA as i64);
}

#[test]
fn a_schema_that_is_not_what_its_version_says_is_damaged_in_one_line() {
    let t = private_dir();
    let db = t.path().join("h.db");
    Store::open(&db, false).unwrap();
    // Version 1 by its number, version 2 by its tables.
    Connection::open(&db)
        .unwrap()
        .execute_batch("PRAGMA user_version = 1")
        .unwrap();
    let e = Store::open_to_read(&db).err().unwrap();
    let line = e.to_string();
    assert!(matches!(e, StoreError::Damaged { .. }), "{line}");
    assert!(
        line.contains("its schema is not version 1's: duplicate column name: ios")
            && line.contains("move it aside")
            && !line.contains('\n'),
        "{line}"
    );
}
