//! The JSON shape of what a worker (`measure::worker`) hands a document:
//! its interval series, its errors (counted by errno, and the first few
//! with their offsets), what stopped it, and the I/Os it gave up on. Each
//! field means what the fact type's field says.

use serde::{Deserialize, Serialize};

use super::shape;
use crate::measure::worker::{Ending, ErrnoCount, HungIo, Interval, IoErrorRecord};

#[derive(Serialize, Deserialize)]
#[serde(remote = "Interval")]
pub struct IntervalDef {
    #[serde(serialize_with = "seconds")]
    pub t: f64,
    pub bytes: u64,
    pub ios: u64,
    /// Absent when nothing completed in the interval, and in documents
    /// written before them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ns: Option<u64>,
}

/// Seconds as the documents always wrote whole ones (`3`, not `3.0`), and
/// fractional ones (a sub-second `--log-interval`) as they are.
fn seconds<S: serde::Serializer>(t: &f64, s: S) -> Result<S::Ok, S::Error> {
    if t.fract() == 0.0 && (0.0..9e15).contains(t) {
        s.serialize_u64(*t as u64)
    } else {
        s.serialize_f64(*t)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Ending", rename_all = "lowercase")]
pub enum EndingDef {
    #[serde(rename = "duration")]
    Deadline,
    Limit,
    Errors,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "ErrnoCount")]
pub struct ErrnoCountDef {
    pub errno: i32,
    pub name: String,
    pub count: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "IoErrorRecord")]
pub struct IoErrorRecordDef {
    pub errno: i32,
    pub message: String,
    pub op: String,
    pub offset: u64,
    /// Absent off a striped or parity volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_offset: Option<u64>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "HungIo")]
pub struct HungIoDef {
    pub op: String,
    pub offset: u64,
    pub bytes: u64,
    pub seconds_in_flight: f64,
    /// Absent off a striped or parity volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_offset: Option<u64>,
}

shape! {
    IntervalDef => Interval,
    EndingDef => Ending,
    ErrnoCountDef => ErrnoCount,
    IoErrorRecordDef => IoErrorRecord,
    HungIoDef => HungIo,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::facts::{Many, Shape};
    use serde_json::json;

    /// What a derive on the worker's types wrote, key for key: an ending by
    /// its option's word, a record's member only on a striped volume (no
    /// `member` key at all elsewhere); and each reads back the same.
    #[test]
    fn a_workers_endings_errors_and_hung_ios_write_the_contracts_keys() {
        let words: Vec<_> = [Ending::Deadline, Ending::Limit, Ending::Errors]
            .iter()
            .map(|e| serde_json::to_value(EndingDef::doc(e)).unwrap())
            .collect();
        assert_eq!(words, [json!("duration"), json!("limit"), json!("errors")]);
        assert_eq!(
            EndingDef::deserialize(json!("duration")).unwrap(),
            Ending::Deadline
        );

        let counts = vec![ErrnoCount {
            errno: 5,
            name: "EIO".into(),
            count: 3,
        }];
        let v = serde_json::to_value(Many::<ErrnoCountDef>::doc(&counts)).unwrap();
        assert_eq!(v, json!([{"errno": 5, "name": "EIO", "count": 3}]));
        assert_eq!(Many::<ErrnoCountDef>::deserialize(v).unwrap(), counts);

        let flat = IoErrorRecord {
            errno: 5,
            message: "Input/output error".into(),
            op: "read".into(),
            offset: 65536,
            member: None,
            member_offset: None,
        };
        let striped = IoErrorRecord {
            member: Some("loop1".into()),
            member_offset: Some(4096),
            ..flat.clone()
        };
        let errs = vec![flat, striped];
        let v = serde_json::to_value(Many::<IoErrorRecordDef>::doc(&errs)).unwrap();
        assert_eq!(
            v,
            json!([
                {"errno": 5, "message": "Input/output error", "op": "read", "offset": 65536},
                {"errno": 5, "message": "Input/output error", "op": "read", "offset": 65536,
                 "member": "loop1", "member_offset": 4096},
            ])
        );
        assert_eq!(Many::<IoErrorRecordDef>::deserialize(v).unwrap(), errs);

        let hung = HungIo {
            op: "write".into(),
            offset: 0,
            bytes: 4096,
            seconds_in_flight: 2.5,
            member: None,
            member_offset: None,
        };
        let v = serde_json::to_value(HungIoDef::doc(&hung)).unwrap();
        assert_eq!(
            v,
            json!({"op": "write", "offset": 0, "bytes": 4096, "seconds_in_flight": 2.5})
        );
        assert_eq!(HungIoDef::deserialize(v).unwrap(), hung);
    }
}
