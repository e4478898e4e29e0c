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
    // 1: disks, the documents recorded, their results, and each result's
    // histogram in a table of its own: a scan of the results (every
    // `history`) then reads a tenth of the pages.
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
        not_device_speed TEXT);
     CREATE UNIQUE INDEX results_by_disk ON results(disk, time, workload, context);
     CREATE TABLE histograms(
        result INTEGER PRIMARY KEY REFERENCES results(id),
        histogram TEXT NOT NULL);",
    // 2: how many I/Os each result rests on (a p99 of a few dozen is
    // little more than the slowest); NULL for results recorded before.
    "ALTER TABLE results ADD COLUMN ios INTEGER;",
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
    #[error("history database {shown} is not one, or is damaged ({why}): if --history names another file, give the database's path; if it is the database, move it aside (a new one is made in its place)")]
    Damaged { shown: String, why: String },
    #[error("history database {shown} has schema {found}, and this stripebench knows {SCHEMA} (a newer stripebench wrote it, or it was edited): use that stripebench, or give --history another file")]
    Newer { shown: String, found: i64 },
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
        // Up to date: nothing to write, and no lock taken (a reader must
        // not wait behind a writer).
        let now: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| classify(&shown, e))?;
        if now == SCHEMA as i64 {
            return Ok(());
        }
        if now < 0 || now > SCHEMA as i64 {
            return Err(StoreError::Newer { shown, found: now });
        }
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| classify(&shown, e))?;
        let found: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| classify(&shown, e))?;
        if found < 0 || found > SCHEMA as i64 {
            return Err(StoreError::Newer { shown, found });
        }
        let found = found as usize;
        for (i, m) in MIGRATIONS.iter().enumerate().skip(found) {
            // A migration that does not apply: the tables are not what
            // their version says (edited by hand, or another program's).
            tx.execute_batch(m).map_err(|e| match classify(&shown, e) {
                StoreError::Other { shown, why } => StoreError::Damaged {
                    shown,
                    why: format!("its schema is not version {found}'s: {why}"),
                },
                e => e,
            })?;
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
                let e = &bounded(e);
                let disk = upsert_disk(&tx, &e.identity).map_err(err)?;
                tx.execute(
                    "INSERT OR IGNORE INTO results(disk, document, host, device, time, workload, label, context,
                        firmware, bytes_per_sec, iops, p50_ns, p99_ns, p999_ns, not_device_speed, ios)
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
                        e.not_device_speed,
                        e.ios.and_then(|v| i64::try_from(v).ok()),
                    ],
                )
                .map_err(err)?;
                if tx.changes() == 1 {
                    tx.execute(
                        "INSERT INTO histograms(result, histogram) VALUES (?1, ?2)",
                        params![tx.last_insert_rowid(), e.histogram],
                    )
                    .map_err(err)?;
                }
            }
        }
        tx.commit().map_err(err)?;
        Ok(new)
    }

    /// Every result, in time order, of the disks `keys` (all when
    /// `None`), with their histograms for the disks `histograms` names
    /// (none for the rest). The disks are read first, then the results
    /// alone (no join, no sort in SQLite: both cost more than the scan),
    /// sorted here.
    pub fn entries(
        &self,
        keys: Option<&[String]>,
        histograms: &[String],
    ) -> Result<Vec<Entry>, StoreError> {
        let err = |e| classify(&self.shown, e);
        let cut = |c: &str| format!("substr({c}, 1, {MAX_TEXT})");
        let mut disks: std::collections::HashMap<i64, DiskIdentity> = Default::default();
        {
            let sql = format!(
                "SELECT id, substr(key, 1, {MAX_KEY}), kind, {}, {}, {}, {} FROM disks",
                cut("wwn"),
                cut("serial"),
                cut("model"),
                cut("firmware")
            );
            let mut stmt = self.conn.prepare(&sql).map_err(err)?;
            let mut rows = stmt.query([]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                let key: String = r.get(1).map_err(err)?;
                if keys.is_some_and(|k| !k.contains(&key)) {
                    continue;
                }
                let kind: String = r.get(2).map_err(err)?;
                disks.insert(
                    r.get(0).map_err(err)?,
                    DiskIdentity {
                        key,
                        kind: IdentityKind::parse(&kind).unwrap_or(IdentityKind::Name),
                        wwn: r.get(3).map_err(err)?,
                        serial: r.get(4).map_err(err)?,
                        model: r.get(5).map_err(err)?,
                        firmware: r.get(6).map_err(err)?,
                    },
                );
            }
        }
        let sql = format!(
            "SELECT disk, {}, {}, {}, time, {}, {}, {},
                    bytes_per_sec, iops, p50_ns, p99_ns, p999_ns, {}, id, ios
             FROM results LIMIT {}",
            cut("firmware"),
            cut("host"),
            cut("device"),
            // A workload key is 25 words, each a few characters.
            "substr(workload, 1, 4096)",
            cut("label"),
            cut("context"),
            cut("not_device_speed"),
            MAX_RESULTS + 1,
        );
        let mut stmt = self.conn.prepare(&sql).map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        let mut all: Vec<(f64, i64, Entry)> = Vec::new();
        let opt_u64 = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
        let mut seen = 0usize;
        while let Some(r) = rows.next().map_err(err)? {
            seen += 1;
            if seen > MAX_RESULTS {
                return Err(StoreError::Other {
                    shown: self.shown.clone(),
                    why: format!(
                        "it holds more than {MAX_RESULTS} results, more than one reading takes: split it (history import into databases per host or per model)"
                    ),
                });
            }
            let Some(id) = disks.get(&r.get::<_, i64>(0).map_err(err)?) else {
                continue;
            };
            let mut identity = id.clone();
            // The firmware of the time: a disk's is updated, its results keep theirs.
            identity.firmware = r.get(1).map_err(err)?;
            let time: f64 = r.get(4).map_err(err)?;
            let e = Entry {
                identity,
                host: r.get(2).map_err(err)?,
                device: r.get(3).map_err(err)?,
                time,
                workload: r.get(5).map_err(err)?,
                label: r.get(6).map_err(err)?,
                context: r.get(7).map_err(err)?,
                bytes_per_sec: r.get(8).map_err(err)?,
                iops: r.get(9).map_err(err)?,
                ios: opt_u64(r.get(15).map_err(err)?),
                p50_ns: opt_u64(r.get(10).map_err(err)?),
                p99_ns: opt_u64(r.get(11).map_err(err)?),
                p999_ns: opt_u64(r.get(12).map_err(err)?),
                histogram: String::new(),
                not_device_speed: r.get(13).map_err(err)?,
            };
            all.push((time, r.get(14).map_err(err)?, e));
        }
        self.fill_histograms(&mut all, histograms)?;
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        Ok(all.into_iter().map(|(_, _, e)| e).collect())
    }

    /// The histograms of the results (by row id) of the disks `keys`, as
    /// their documents held them: each at most [`MAX_HISTOGRAM`] bytes, and
    /// [`MAX_HISTOGRAMS`] in all (those past it are left out, and the
    /// merged figures then say over how many runs they are).
    fn fill_histograms(
        &self,
        all: &mut [(f64, i64, Entry)],
        keys: &[String],
    ) -> Result<(), StoreError> {
        if keys.is_empty() {
            return Ok(());
        }
        let err = |e| classify(&self.shown, e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT histogram FROM histograms WHERE result = ?1 AND length(histogram) <= {MAX_HISTOGRAM}"
            ))
            .map_err(err)?;
        let mut total = 0usize;
        for (_, id, e) in all.iter_mut() {
            if !keys.contains(&e.identity.key) {
                continue;
            }
            let h: Option<String> = stmt
                .query_row(params![*id], |r| r.get(0))
                .optional()
                .map_err(err)?;
            if let Some(h) = h {
                total += h.len();
                if total > MAX_HISTOGRAMS {
                    break;
                }
                e.histogram = h;
            }
        }
        Ok(())
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
}

/// The longest histogram read back (a run's is a few kilobytes).
pub const MAX_HISTOGRAM: usize = 1 << 20;

/// The most histogram text read at once: 1,000 runs of a disk at 256 KiB.
pub const MAX_HISTOGRAMS: usize = 256 << 20;

/// The longest disk key kept (a loop device's backing file may be long).
pub const MAX_KEY: usize = 1024;

/// `e` as it is stored: every text printable and bounded ([`MAX_KEY`] for
/// the key, [`MAX_TEXT`] for the rest), whoever wrote the document.
fn bounded(e: &Entry) -> Entry {
    use crate::device::identity::printable;
    let t = |s: &str| printable(s, MAX_TEXT);
    let o = |s: &Option<String>| s.as_deref().map(t);
    let mut b = e.clone();
    // Keys are compared: nothing trimmed, a control character escaped
    // (stripebench's own keys hold none: `identity::escaped`).
    b.identity.key = e
        .identity
        .key
        .chars()
        .flat_map(|c| match c {
            c if c.is_ascii_graphic() || c == ' ' => vec![c],
            c => format!("\\u{{{:x}}}", c as u32).chars().collect(),
        })
        .take(MAX_KEY)
        .collect();
    b.identity.wwn = o(&e.identity.wwn);
    b.identity.serial = o(&e.identity.serial);
    b.identity.model = o(&e.identity.model);
    b.identity.firmware = o(&e.identity.firmware);
    b.host = t(&e.host);
    b.device = t(&e.device);
    b.label = t(&e.label);
    b.context = t(&e.context);
    b.workload = printable(&e.workload, 4096);
    b.not_device_speed = o(&e.not_device_speed);
    b
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
    if matches!(
        e,
        rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)
    ) {
        return StoreError::Damaged {
            shown,
            why: format!(
                "a value of the wrong type: {}",
                crate::base::error::show_text(&e.to_string())
            ),
        };
    }
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
