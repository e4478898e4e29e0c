//! The SVG canvas every chart draws on: a drawing in memory, the error a
//! failed drawing gives, and the palette (the `--plot` SVGs, the HTML
//! report's charts, the rebuild's trade-off).

use anyhow::{anyhow, Result};
use plotters::prelude::*;

pub(crate) const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Draws an SVG in memory (plotters escapes the text it draws: target
/// names go into the markup safely).
pub fn svg(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<()>,
) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

pub(crate) fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing the plot failed: {e:?}")
}

/// `n` colours that differ: the palette, and past it hues evenly spaced
/// round the wheel (a palette repeated makes two series look like one).
pub(crate) fn palette(n: usize) -> Vec<RGBColor> {
    if n <= COLORS.len() {
        return COLORS[..n].to_vec();
    }
    (0..n)
        .map(|i| {
            let h = i as f64 / n as f64 * 360.0;
            // Alternate the lightness, so neighbouring hues stay apart.
            let l = if i % 2 == 0 { 0.42 } else { 0.58 };
            let (r, g, b) = hsl_to_rgb(h, 0.75, l);
            RGBColor(r, g, b)
        })
        .collect()
}

fn hsl_to_rgb(h: f64, s: f64, l: f64) -> (u8, u8, u8) {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let x = c * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
    let m = l - c / 2.0;
    let (r, g, b) = match (h / 60.0) as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let q = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    (q(r), q(g), q(b))
}
