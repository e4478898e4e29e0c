//! The per-disk history: an SQLite database of every target's result,
//! keyed by the disk's identity (`device::identity`), one row per target
//! of each run document recorded.
//!
//! - Writers are safe together: WAL, a busy timeout, and each document
//!   recorded in one `BEGIN IMMEDIATE` transaction.
//! - The schema is versioned (`PRAGMA user_version`) and migrated forward
//!   in order; a database from a newer stripebench is refused, not touched.
//! - A document is recorded once: by the SHA-256 of its JSON, so that
//!   `history import` of what a run already recorded adds nothing.
//! - What is read back is bounded: text columns are cut by SQLite before
//!   they reach us.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::device::identity::{DiskIdentity, IdentityKind, MAX_TEXT};
use crate::document::history::Entry;

/// Each schema version's migration from the one before; the database's
/// `user_version` is how many have run.
const MIGRATIONS: &[&str] = &[
    // 1: disks, the documents recorded, and their results.
    "CREATE TABLE disks(
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        wwn TEXT, serial TEXT, model TEXT, firmware TEXT);
     CREATE TABLE documents(
        id INTEGER PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        path TEXT,
        recorded REAL NOT NULL);
     CREATE TABLE results(
        id INTEGER PRIMARY KEY,
        disk INTEGER NOT NULL REFERENCES disks(id),
        document INTEGER NOT NULL REFERENCES documents(id),
        host TEXT NOT NULL,
        device TEXT NOT NULL,
        time REAL NOT NULL,
        workload TEXT NOT NULL,
        label TEXT NOT NULL,
        context TEXT NOT NULL,
        firmware TEXT,
        bytes_per_sec REAL NOT NULL,
        iops REAL NOT NULL,
        p50_ns INTEGER, p99_ns INTEGER, p999_ns INTEGER,
        histogram TEXT NOT NULL,
        not_device_speed TEXT);
     CREATE INDEX results_by_disk ON results(disk, time);",
];

/// The schema version this stripebench writes.
pub const SCHEMA: usize = MIGRATIONS.len();

/// The most results read at once: 10,000 disks of 1,000 runs each, about
/// 3 GB of memory at most; a database holding more is refused, not read.
pub const MAX_RESULTS: usize = 10_000_000;

/// How long a writer waits for another's transaction.
const BUSY: Duration = Duration::from_secs(30);

/// Why the database could not be used: one line.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Refused(#[from] super::place::Refused),
    #[error("history database {shown} is damaged ({why}): move it aside (a new one is made in its place) or give --history another file")]
    Damaged { shown: String, why: String },
    #[error("history database {shown} was written by a newer stripebench (schema {found}, this one knows {SCHEMA}): use that stripebench, or give --history another file")]
    Newer { shown: String, found: usize },
    #[error("history database {shown} is busy: another stripebench held it for {}s; run again", BUSY.as_secs())]
    Busy { shown: String },
    #[error("history database {shown}: {why}")]
    Other { shown: String, why: String },
    #[error(
        "no history at {shown} yet: run, compare or advise record there (or history import DOC...)"
    )]
    Missing { shown: String },
}

/// An open history database.
pub struct Store {
    conn: Connection,
    shown: String,
}

impl Store {
    /// Opens the database at `path` for recording (made when missing;
    /// `make_dir`: its directory too), checked as [`super::place`] says.
    pub fn open(path: &Path, make_dir: bool) -> Result<Store, StoreError> {
        let (real, _) = super::place::checked(path, make_dir, true)?;
        Store::connect(&real, path, OpenFlags::SQLITE_OPEN_READ_WRITE)
    }

    /// Opens an existing database to read.
    pub fn open_to_read(path: &Path) -> Result<Store, StoreError> {
        let (real, exists) = super::place::checked(path, false, false)?;
        if !exists {
            return Err(StoreError::Missing {
                shown: crate::base::error::show_path(path),
            });
        }
        Store::connect(&real, path, OpenFlags::SQLITE_OPEN_READ_WRITE)
    }

    fn connect(real: &Path, shown: &Path, flags: OpenFlags) -> Result<Store, StoreError> {
        let shown = crate::base::error::show_path(shown);
        let flags = flags | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(real, flags).map_err(|e| classify(&shown, e))?;
        let mut store = Store { conn, shown };
        store
            .conn
            .busy_timeout(BUSY)
            .map_err(|e| classify(&store.shown, e))?;
        store.prepare().map_err(|e| classify(&store.shown, e))?;
        store.migrate()?;
        Ok(store)
    }

    fn prepare(&mut self) -> rusqlite::Result<()> {
        // The integrity of the header first: a file that is not a database
        // says so here, before anything is written to it.
        self.conn
            .query_row("PRAGMA schema_version", [], |_| Ok(()))?;
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(rusqlite::Error::InvalidParameterName(format!(
                "the journal mode stayed {mode}"
            )));
        }
        self.conn
            .execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let shown = self.shown.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| classify(&shown, e))?;
        let found: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| classify(&shown, e))?;
        let found = usize::try_from(found).unwrap_or(usize::MAX);
        if found > SCHEMA {
            return Err(StoreError::Newer { shown, found });
        }
        for (i, m) in MIGRATIONS.iter().enumerate().skip(found) {
            tx.execute_batch(m).map_err(|e| classify(&shown, e))?;
            tx.pragma_update(None, "user_version", i as i64 + 1)
                .map_err(|e| classify(&shown, e))?;
        }
        tx.commit().map_err(|e| classify(&shown, e))
    }

    /// Records a run document's entries, once: `hash` is its JSON's, `path`
    /// the file it was written to or read from. Whether it was new.
    pub fn record(
        &mut self,
        hash: &str,
        path: Option<&str>,
        recorded: f64,
        entries: &[Entry],
    ) -> Result<bool, StoreError> {
        let shown = self.shown.clone();
        let err = |e| classify(&shown, e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        let new = tx
            .execute(
                "INSERT OR IGNORE INTO documents(hash, path, recorded) VALUES (?1, ?2, ?3)",
                params![hash, path, recorded],
            )
            .map_err(err)?
            == 1;
        if new {
            let doc = tx.last_insert_rowid();
            for e in entries {
                let disk = upsert_disk(&tx, &e.identity).map_err(err)?;
                tx.execute(
                    "INSERT INTO results(disk, document, host, device, time, workload, label, context,
                        firmware, bytes_per_sec, iops, p50_ns, p99_ns, p999_ns, histogram, not_device_speed)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                    params![
                        disk,
                        doc,
                        e.host,
                        e.device,
                        e.time,
                        e.workload,
                        e.label,
                        e.context,
                        e.identity.firmware,
                        e.bytes_per_sec,
                        e.iops,
                        e.p50_ns.map(|v| v as i64),
                        e.p99_ns.map(|v| v as i64),
                        e.p999_ns.map(|v| v as i64),
                        e.histogram,
                        e.not_device_speed,
                    ],
                )
                .map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
        Ok(new)
    }

    /// Every result, in time order (histograms left out), of the disks
    /// `keys` (all when `None`).
    pub fn entries(&self, keys: Option<&[String]>) -> Result<Vec<Entry>, StoreError> {
        let err = |e| classify(&self.shown, e);
        let cut = |c: &str| format!("substr({c}, 1, {MAX_TEXT})");
        let sql = format!(
            "SELECT {}, d.kind, {}, {}, {}, {}, {}, {}, r.time, {}, {}, {},
                    r.bytes_per_sec, r.iops, r.p50_ns, r.p99_ns, r.p999_ns, {}
             FROM results r JOIN disks d ON d.id = r.disk
             {}
             ORDER BY r.time, r.id
             LIMIT {}",
            cut("d.key"),
            cut("d.wwn"),
            cut("d.serial"),
            cut("d.model"),
            cut("r.firmware"),
            cut("r.host"),
            cut("r.device"),
            // A workload key is 25 words, each a few characters.
            "substr(r.workload, 1, 4096)",
            cut("r.label"),
            cut("r.context"),
            cut("r.not_device_speed"),
            if keys.is_some() {
                "WHERE d.key IN (SELECT value FROM json_each(?1))"
            } else {
                ""
            },
            MAX_RESULTS + 1,
        );
        let mut stmt = self.conn.prepare(&sql).map_err(err)?;
        let keys_json = serde_json::to_string(&keys.unwrap_or(&[])).unwrap_or_default();
        let map = |r: &rusqlite::Row| -> rusqlite::Result<Entry> {
            let kind: String = r.get(1)?;
            let opt_u64 = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
            Ok(Entry {
                identity: DiskIdentity {
                    key: r.get(0)?,
                    kind: IdentityKind::parse(&kind).unwrap_or(IdentityKind::Name),
                    wwn: r.get(2)?,
                    serial: r.get(3)?,
                    model: r.get(4)?,
                    firmware: r.get(5)?,
                },
                host: r.get(6)?,
                device: r.get(7)?,
                time: r.get(8)?,
                workload: r.get(9)?,
                label: r.get(10)?,
                context: r.get(11)?,
                bytes_per_sec: r.get(12)?,
                iops: r.get(13)?,
                p50_ns: opt_u64(r.get(14)?),
                p99_ns: opt_u64(r.get(15)?),
                p999_ns: opt_u64(r.get(16)?),
                histogram: String::new(),
                not_device_speed: r.get(17)?,
            })
        };
        let rows = if keys.is_some() {
            stmt.query_map([keys_json], map)
        } else {
            stmt.query_map([], map)
        }
        .map_err(err)?;
        let all = rows
            .collect::<rusqlite::Result<Vec<Entry>>>()
            .map_err(err)?;
        if all.len() > MAX_RESULTS {
            return Err(StoreError::Other {
                shown: self.shown.clone(),
                why: format!(
                    "it holds more than {MAX_RESULTS} results, more than one reading takes: split it (history import into databases per host or per model)"
                ),
            });
        }
        Ok(all)
    }

    /// The keys of the disks `what` names: a key, a WWN, a serial, or the
    /// device name (`sdq` or `/dev/sdq`) at the disk's last result.
    pub fn find(&self, what: &str) -> Result<Vec<String>, StoreError> {
        let err = |e| classify(&self.shown, e);
        let name = what.strip_prefix("/dev/").unwrap_or(what);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT d.key FROM disks d WHERE d.key = ?1 OR d.wwn = ?1 OR d.serial = ?1
                    OR lower(d.wwn) = lower(?1)
                 UNION
                 SELECT d.key FROM disks d JOIN results r ON r.disk = d.id
                    WHERE r.id = (SELECT max(id) FROM results WHERE disk = d.id)
                    AND (r.device = ?1 OR r.device = '/dev/' || ?2)",
            )
            .map_err(err)?;
        let keys = stmt
            .query_map(params![what, name], |r| r.get::<_, String>(0))
            .map_err(err)?
            .collect::<rusqlite::Result<Vec<String>>>()
            .map_err(err)?;
        Ok(keys)
    }

    /// A result's histogram, as its document held it (by disk and time).
    pub fn histogram(&self, key: &str, time: f64) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(
                "SELECT r.histogram FROM results r JOIN disks d ON d.id = r.disk
                 WHERE d.key = ?1 AND r.time = ?2 AND length(r.histogram) <= 1048576",
                params![key, time],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| classify(&self.shown, e))
    }
}

fn upsert_disk(tx: &rusqlite::Transaction, id: &DiskIdentity) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO disks(key, kind, wwn, serial, model, firmware) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT(key) DO UPDATE SET wwn = coalesce(excluded.wwn, wwn),
            serial = coalesce(excluded.serial, serial), model = coalesce(excluded.model, model),
            firmware = coalesce(excluded.firmware, firmware)",
        params![
            id.key,
            id.kind.name(),
            id.wwn,
            id.serial,
            id.model,
            id.firmware
        ],
    )?;
    tx.query_row("SELECT id FROM disks WHERE key = ?1", [&id.key], |r| {
        r.get(0)
    })
}

/// SQLite's error as one of ours.
fn classify(shown: &str, e: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    let shown = shown.to_string();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => StoreError::Damaged {
            shown,
            why: crate::base::error::show_text(&e.to_string()).into_owned(),
        },
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => {
            StoreError::Busy { shown }
        }
        _ => StoreError::Other {
            shown,
            why: crate::base::error::show_text(&e.to_string()).into_owned(),
        },
    }
}

#[cfg(test)]
mod tests;
