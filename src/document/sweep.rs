//! The sweep document (`sweep --json`): the swept parameters, and per point
//! the summary over its repeats with every repeat's full run document. A
//! parameter's text form (`NAME=V1,V2,...`) is parsed here, beside the type.

use serde::{Deserialize, Serialize};

use crate::document::run::{RunDocument, ToolInfo};

/// The parameters a sweep can vary.
pub const PARAMS: [&str; 8] = [
    "readahead",
    "bs",
    "jobs",
    "iodepth",
    "mode",
    "rw",
    "members",
    "rate",
];

/// `--curve`'s default: the percentages of the unthrottled rate a latency
/// curve (`--param rate=curve`) measures, as vdbench's curve does.
pub const CURVE_PCTS: [f64; 7] = [10.0, 50.0, 70.0, 80.0, 90.0, 95.0, 100.0];

/// One value of `--param rate=...`: each worker's schedule at that point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateValue {
    /// `max`: no schedule, as fast as the target allows.
    Max,
    /// `N%`: that share of what each worker delivered at the point's `max`.
    Pct(f64),
    /// `SIZE/s`: bytes per second per worker.
    Bytes(f64),
    /// `Niops`: I/Os per second per worker.
    Iops(f64),
}

impl RateValue {
    /// Reads one value: `max`, `50%`, `100m/s` (as `--rate`), `200iops`.
    pub fn parse(v: &str) -> Result<RateValue, String> {
        let v = v.trim();
        if v == "max" {
            return Ok(RateValue::Max);
        }
        if let Some(p) = v.strip_suffix('%') {
            return match p.trim().parse::<f64>() {
                Ok(x) if x > 0.0 && x <= 100.0 => Ok(RateValue::Pct(x)),
                _ => Err(format!(
                    "'{v}' is not a percentage of the unthrottled rate: give one above 0 and at most 100"
                )),
            };
        }
        if let Some(n) = v.strip_suffix("iops") {
            return crate::base::units::parse_iops(n).map(RateValue::Iops);
        }
        crate::base::units::parse_io_rate(v).map(RateValue::Bytes)
    }
}

/// Reads `--curve`'s percentages (each above 0 and at most 100).
pub fn parse_curve_pct(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 100.0 => Ok(x),
        _ => Err(format!(
            "'{text}' is not a percentage of the unthrottled rate: give numbers above 0 and at most 100, such as 10,50,90"
        )),
    }
}

/// `rate=curve` as the values it stands for: `max`, then each percentage.
pub fn curve_values(pcts: &[f64]) -> Vec<String> {
    std::iter::once("max".to_string())
        .chain(pcts.iter().map(|p| format!("{p}%")))
        .collect()
}

/// One `--param NAME=V1,V2,...`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub values: Vec<String>,
}

pub fn parse_param(text: &str) -> Result<Param, String> {
    let Some((name, list)) = text.split_once('=') else {
        return Err(format!(
            "--param {text}: write NAME=V1,V2,... such as readahead=0,128,1024"
        ));
    };
    let name = name.trim();
    if !PARAMS.contains(&name) {
        return Err(format!(
            "--param {text}: unknown parameter '{name}': choose from {}",
            PARAMS.join(", ")
        ));
    }
    let values: Vec<String> = list.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(format!(
            "--param {text}: an empty value in the list: give values such as {name}=1,2,4"
        ));
    }
    if name == "rate" && values != ["curve"] {
        let mut max = false;
        let mut pct = false;
        for v in &values {
            match RateValue::parse(v).map_err(|e| format!("--param {text}: {e}"))? {
                RateValue::Max => max = true,
                RateValue::Pct(_) => pct = true,
                _ => {}
            }
        }
        if pct && !max {
            return Err(format!(
                "--param {text}: a percentage is of the unthrottled rate: put max in the list (or use rate=curve)"
            ));
        }
    }
    Ok(Param {
        name: name.into(),
        values,
    })
}

/// One point's summary over its repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PointDoc {
    /// The swept values, in --param order.
    pub values: Vec<(String, String)>,
    /// Total bytes per second: median, min and max over the repeats.
    pub bytes_per_sec_median: f64,
    pub bytes_per_sec_min: f64,
    pub bytes_per_sec_max: f64,
    /// Every repeat's full run document.
    pub runs: Vec<RunDocument>,
    /// A signal ended this point's last run early: its figures cover what
    /// was measured until then.
    #[serde(default)]
    pub partial: bool,
}

/// The sweep document (`--json`): every finished point.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename = "sweep")]
pub struct SweepDocument {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub params: Vec<Param>,
    pub repeat: usize,
    pub interrupted: bool,
    pub points: Vec<PointDoc>,
}

/// The cartesian product of the values, first parameter outermost.
pub fn points(params: &[Param]) -> Vec<Vec<(String, String)>> {
    params.iter().fold(vec![Vec::new()], |acc, p| {
        acc.iter()
            .flat_map(|prefix| {
                p.values.iter().map(move |v| {
                    let mut x = prefix.clone();
                    x.push((p.name.clone(), v.clone()));
                    x
                })
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_parse_and_multiply() {
        let a = parse_param("readahead=0,128,1024").unwrap();
        let b = parse_param("mode=direct,buffered").unwrap();
        let p = points(&[a, b]);
        assert_eq!(p.len(), 6);
        assert_eq!(
            p[0],
            vec![
                ("readahead".into(), "0".into()),
                ("mode".into(), "direct".into())
            ]
        );
        assert_eq!(
            p[5],
            vec![
                ("readahead".into(), "1024".into()),
                ("mode".into(), "buffered".into())
            ]
        );
        assert!(parse_param("speed=1,2")
            .unwrap_err()
            .contains("unknown parameter"));
        assert!(parse_param("bs=").unwrap_err().contains("empty value"));
        assert!(parse_param("bs=4k,,8k")
            .unwrap_err()
            .contains("empty value"));
        assert!(parse_param("bs").unwrap_err().contains("NAME=V1"));
    }
}
