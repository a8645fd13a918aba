//! What `sim --svg` and `replay --plot` draw with: one picture size, one
//! palette, one legend swatch and box, and one way of reporting a drawing error, so
//! the two commands' pictures look alike.
//!
//! Drawn with `plotters`' SVG backend and no font features: SVG text is
//! laid out by whatever shows the file, so no font files or system
//! libraries are needed.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Width and height of every picture, pixels.
pub(crate) const SIZE: (u32, u32) = (900, 540);

/// A plotters error as the message the command prints.
pub(crate) fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("drawing an SVG: {e:?}")
}

/// The colour of series `i`.
pub(crate) fn colour(i: usize) -> RGBColor {
    const C: [RGBColor; 6] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
    ];
    C[i % C.len()]
}

/// A legend swatch (a filled square, so a line per series stays the only
/// polyline in a chart).
pub(crate) fn swatch(c: RGBColor) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled())
}

/// Draws `chart`'s legend at `position`: a white, bordered box over the
/// plot, the one look every picture's legend has.
///
/// # Errors
/// Drawing failed.
pub(crate) fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

/// A chart over time (or any linear x) from 0 to `x_max` and 0 to `y_max`
/// on a white `root`, with `title` above it: the frame every line chart has.
///
/// # Errors
/// Drawing failed.
pub(crate) fn linear_chart<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: String,
    x_max: f64,
    y_max: f64,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String> {
    root.fill(&WHITE).map_err(err)?;
    ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(err)
}
