//! Steady state as fio defines it (`steadystate=`, its `steadystate.c`):
//! over a rolling window of the last N intervals' figures (IOPS, bytes per
//! second or mean latency), either every figure lies within the limit of
//! the window's mean (`iops`, `bw`, `lat`: the largest deviation), or the
//! least-squares slope of the figures against their interval number does
//! (`iops_slope`, `bw_slope`, `lat_slope`). A limit is absolute (in the
//! figure's own unit per interval) or a percentage of the window's mean.
//! `run --steady` and a fio job's `ss=` stop the run the first interval
//! the criterion is met.

use std::collections::VecDeque;

/// Which figure is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    Iops,
    Bw,
    Lat,
}

/// The criterion: a figure, judged by its deviation or its slope, against
/// a limit (absolute, or a percentage of the window's mean).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Criterion {
    pub figure: Figure,
    pub slope: bool,
    pub limit: f64,
    pub percent: bool,
}

impl Criterion {
    /// fio's spelling: `iops:10%`, `bw_slope:0.5%`, `lat:200` (ns).
    pub fn parse(s: &str) -> Result<Criterion, String> {
        let (name, limit) = s.split_once(':').ok_or_else(|| {
            format!("'{s}' is not CRITERION:LIMIT, such as iops:10% or bw_slope:1%")
        })?;
        let (figure, slope) = match name {
            "iops" => (Figure::Iops, false),
            "iops_slope" => (Figure::Iops, true),
            "bw" => (Figure::Bw, false),
            "bw_slope" => (Figure::Bw, true),
            "lat" => (Figure::Lat, false),
            "lat_slope" => (Figure::Lat, true),
            _ => {
                return Err(format!(
                    "'{name}' is not a criterion: give iops, iops_slope, bw, bw_slope, lat or lat_slope"
                ))
            }
        };
        let (num, percent) = match limit.strip_suffix('%') {
            Some(n) => (n, true),
            None => (limit, false),
        };
        let limit: f64 = num
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
            .ok_or_else(|| format!("'{limit}' is not a limit above 0, such as 10% or 2"))?;
        Ok(Criterion {
            figure,
            slope,
            limit,
            percent,
        })
    }

    /// The spelling `parse` reads.
    pub fn spelling(&self) -> String {
        let name = match self.figure {
            Figure::Iops => "iops",
            Figure::Bw => "bw",
            Figure::Lat => "lat",
        };
        format!(
            "{name}{}:{}{}",
            if self.slope { "_slope" } else { "" },
            self.limit,
            if self.percent { "%" } else { "" }
        )
    }
}

/// The window's judgement, once it is full: the criterion's value (the
/// largest deviation or the slope's size, in percent when the limit is),
/// the window's mean, and whether it is under the limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    pub value: f64,
    pub mean: f64,
    pub steady: bool,
}

/// The rolling window of the last `n` intervals' figures.
#[derive(Debug, Clone)]
pub struct Window {
    criterion: Criterion,
    n: usize,
    values: VecDeque<f64>,
}

impl Window {
    /// A window of `n` intervals (at least 2: one figure has no spread).
    pub fn new(criterion: Criterion, n: usize) -> Window {
        let n = n.max(2);
        Window {
            criterion,
            n,
            values: VecDeque::with_capacity(n),
        }
    }

    /// Adds one interval's figure; once the window is full, its judgement.
    pub fn push(&mut self, figure: f64) -> Option<Judged> {
        if self.values.len() == self.n {
            self.values.pop_front();
        }
        self.values.push_back(figure);
        (self.values.len() == self.n).then(|| judge(self.criterion, self.values.make_contiguous()))
    }

    /// The figures in the window, oldest first.
    pub fn values(&self) -> Vec<f64> {
        self.values.iter().copied().collect()
    }
}

/// Judges `values` (one per interval, oldest first) by `c`, as fio does:
/// the largest |x - mean|, or the least-squares slope over x = 0..n-1;
/// with a percentage limit, as a percentage of the mean. fio stops when
/// the value is below the limit.
pub fn judge(c: Criterion, values: &[f64]) -> Judged {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let raw = if c.slope {
        let mx = (n - 1.0) / 2.0;
        let sxy: f64 = values
            .iter()
            .enumerate()
            .map(|(i, y)| (i as f64 - mx) * (y - mean))
            .sum();
        let sxx: f64 = (0..values.len()).map(|i| (i as f64 - mx).powi(2)).sum();
        if sxx > 0.0 {
            sxy / sxx
        } else {
            0.0
        }
    } else {
        values.iter().map(|x| (x - mean).abs()).fold(0.0, f64::max)
    };
    let value = if c.percent {
        if mean > 0.0 {
            100.0 * raw / mean
        } else {
            f64::INFINITY
        }
    } else {
        raw
    }
    .abs();
    Judged {
        value,
        mean,
        steady: value < c.limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_s_spellings_parse_and_read_back() {
        for s in ["iops:10%", "bw_slope:0.5%", "lat:200", "lat_slope:2%"] {
            assert_eq!(Criterion::parse(s).unwrap().spelling(), s);
        }
        assert!(Criterion::parse("iops").is_err());
        assert!(Criterion::parse("speed:1%").is_err());
        assert!(Criterion::parse("iops:0%").is_err());
        assert!(Criterion::parse("iops:-1").is_err());
        assert!(Criterion::parse("iops:nan").is_err());
    }

    #[test]
    fn the_deviation_is_the_largest_distance_from_the_mean() {
        let c = Criterion::parse("iops:10%").unwrap();
        // Mean 100; the farthest is 9 away: 9% < 10%.
        let j = judge(c, &[91.0, 100.0, 109.0, 100.0]);
        assert!((j.mean - 100.0).abs() < 1e-9 && (j.value - 9.0).abs() < 1e-9 && j.steady);
        let j = judge(c, &[80.0, 100.0, 120.0, 100.0]);
        assert!((j.value - 20.0).abs() < 1e-9 && !j.steady);
        // Absolute: within 2 of the mean.
        let a = Criterion::parse("iops:2").unwrap();
        assert!(judge(a, &[99.0, 101.0]).steady);
        assert!(!judge(a, &[95.0, 105.0]).steady);
    }

    #[test]
    fn the_slope_is_the_least_squares_slope_per_interval() {
        // y = 2x + 100: slope 2 per interval, mean 103 over x = 0..3.
        let v = [100.0, 102.0, 104.0, 106.0];
        let abs = judge(Criterion::parse("bw_slope:2.5").unwrap(), &v);
        assert!((abs.value - 2.0).abs() < 1e-9 && abs.steady);
        let pct = judge(Criterion::parse("bw_slope:1%").unwrap(), &v);
        assert!((pct.value - 200.0 / 103.0).abs() < 1e-9 && !pct.steady);
        // A falling figure judges by the slope's size.
        let down: Vec<f64> = v.iter().rev().copied().collect();
        assert!((judge(Criterion::parse("bw_slope:2.5").unwrap(), &down).value - 2.0).abs() < 1e-9);
        // Flat is steady at any limit.
        assert!(judge(Criterion::parse("iops_slope:0.1%").unwrap(), &[5.0; 6]).steady);
    }

    #[test]
    fn the_window_judges_only_once_full_and_rolls() {
        let mut w = Window::new(Criterion::parse("iops:10%").unwrap(), 3);
        assert!(w.push(10.0).is_none());
        assert!(w.push(100.0).is_none());
        assert!(!w.push(100.0).unwrap().steady);
        // The 10 has rolled out.
        assert!(w.push(100.0).unwrap().steady);
        assert_eq!(w.values(), vec![100.0, 100.0, 100.0]);
    }

    #[test]
    fn a_mean_of_zero_is_never_steady_by_percentage() {
        assert!(!judge(Criterion::parse("bw:10%").unwrap(), &[0.0, 0.0]).steady);
    }
}
