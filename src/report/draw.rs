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
