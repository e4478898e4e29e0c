//! The sweep document (`sweep --json`): the swept parameters, and per point
//! the summary over its repeats with every repeat's full run document. A
//! parameter's text form (`NAME=V1,V2,...`) is parsed here, beside the type.

use serde::{Deserialize, Serialize};

use crate::document::run::{RunDocument, ToolInfo};

/// The parameters a sweep can vary.
pub const PARAMS: [&str; 7] = [
    "readahead",
    "bs",
    "jobs",
    "iodepth",
    "mode",
    "rw",
    "members",
];

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
