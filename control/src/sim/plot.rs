//! `railyard sim --svg DIR`: the pictures an architect puts next to the
//! tables — the FCT-slowdown CDF of every load-balancing run, the uplinks'
//! utilisation per leaf, where PFC pauses spread (switches by tier, cables
//! as thick and red as the pauses they carried), and the depth over time
//! of each `--sample-queue`.
//!
//! Drawn with the helpers of [`crate::plotting`], shared with `replay
//! --plot`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::report::tier_name;
use super::SimReport;
use crate::plotting::{colour, draw_legend, err, linear_chart, swatch, SIZE};

/// Most NICs a pause map draws (beyond, the hosts' row is left out).
const MAX_MAP_HOSTS: usize = 256;

/// One run: its label (the `--lb` mode) and report.
pub struct PlotRun<'a> {
    /// Legend and panel title.
    pub label: &'a str,
    /// What it reported.
    pub report: &'a SimReport,
}

/// Writes the pictures the runs have data for into `dir` (created if
/// missing): `fct-cdf.svg` (with flows), `uplinks.svg` (with uplinks),
/// `pauses.svg`, `queue-SWITCH-INTERFACE-QUEUE.svg` per sampled queue
/// (`/` in names becomes `_`). Returns the files written.
///
/// # Errors
///
/// The directory or a file cannot be written.
pub fn write_all(dir: &Path, runs: &[PlotRun<'_>]) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    let mut save = |name: String, svg: String| -> Result<(), String> {
        let path = dir.join(name);
        std::fs::write(&path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
        Ok(())
    };
    if runs
        .iter()
        .any(|r| r.report.flow_fct.iter().any(|f| f.slowdown.is_some()))
    {
        save("fct-cdf.svg".into(), fct_cdf(runs)?)?;
    }
    if runs.iter().any(|r| !uplink_groups(r.report).is_empty()) {
        save("uplinks.svg".into(), uplinks(runs)?)?;
    }
    if runs.iter().any(|r| !r.report.link_load.is_empty()) {
        save("pauses.svg".into(), pauses(runs)?)?;
    }
    let mut names: Vec<&str> = Vec::new();
    for r in runs {
        for q in &r.report.queues {
            if !names.contains(&q.name.as_str()) {
                names.push(&q.name);
            }
        }
    }
    for name in names {
        save(queue_file(name), queue(runs, name)?)?;
    }
    Ok(written)
}

/// The file a queue's depth goes to.
pub fn queue_file(name: &str) -> String {
    format!("queue-{}.svg", name.replace(':', "-").replace('/', "_"))
}

/// The FCT-slowdown CDF, one line per run, slowdown on a log axis.
fn fct_cdf(runs: &[PlotRun<'_>]) -> Result<String, String> {
    let curves: Vec<(&str, Vec<f64>)> = runs
        .iter()
        .map(|r| {
            let mut v: Vec<f64> = r
                .report
                .flow_fct
                .iter()
                .filter_map(|f| f.slowdown)
                .map(|s| s.max(1.0))
                .collect();
            v.sort_by(f64::total_cmp);
            (r.label, v)
        })
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let max = curves
        .iter()
        .filter_map(|(_, v)| v.last().copied())
        .fold(2.0, f64::max)
        * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("FCT slowdown CDF", ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(55)
            .build_cartesian_2d((1.0..max).log_scale(), 0.0..1.0)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("slowdown (FCT / ideal FCT), log scale")
            .y_desc("fraction of flows")
            .draw()
            .map_err(err)?;
        for (i, (label, v)) in curves.iter().enumerate() {
            let n = v.len() as f64;
            // A step per flow: the fraction finished within each slowdown.
            let mut pts = vec![(v[0], 0.0)];
            for (k, s) in v.iter().enumerate() {
                pts.push((*s, k as f64 / n));
                pts.push((*s, (k + 1) as f64 / n));
            }
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(err)?
                .label(format!("{label} ({} flows)", v.len()))
                .legend(swatch(c));
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Per leaf (tier 1) with uplinks, its uplinks' utilisation, in the
/// order the switch names them.
fn uplink_groups(r: &SimReport) -> Vec<(&str, Vec<(&str, f64)>)> {
    let mut by: BTreeMap<&str, Vec<(&str, f64)>> = BTreeMap::new();
    for l in r
        .link_load
        .iter()
        .filter(|l| l.tier == 1 && l.peer_tier > l.tier)
    {
        by.entry(l.switch.as_str())
            .or_default()
            .push((l.interface.as_str(), l.utilisation));
    }
    let mut v: Vec<_> = by.into_iter().collect();
    v.sort_by(|a, b| crate::natural::cmp(a.0, b.0));
    for (_, ups) in &mut v {
        ups.sort_by(|a, b| crate::natural::cmp(a.0, b.0));
    }
    v
}

/// An SVG of `size` split into a panel per run (`rows`: stacked, else
/// side by side), each drawn by `draw(area, run index, run)`.
fn per_run_panels(
    size: (u32, u32),
    runs: &[PlotRun<'_>],
    rows: bool,
    mut draw: impl FnMut(&DrawingArea<SVGBackend<'_>, Shift>, usize, &PlotRun<'_>) -> Result<(), String>,
) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let n = runs.len().max(1);
        let panels = root.split_evenly(if rows { (n, 1) } else { (1, n) });
        for (i, (run, area)) in runs.iter().zip(&panels).enumerate() {
            draw(area, i, run)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Uplink utilisation bars per leaf, a panel per run.
fn uplinks(runs: &[PlotRun<'_>]) -> Result<String, String> {
    let size = (SIZE.0, SIZE.1.max(260 * runs.len() as u32));
    per_run_panels(size, runs, true, |area, i, run| {
        uplink_panel(area, run, colour(i))
    })
}

/// One run's uplink bars: a group per leaf, a bar per uplink.
fn uplink_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    run: &PlotRun<'_>,
    c: RGBColor,
) -> Result<(), String> {
    let groups = uplink_groups(run.report);
    let slots: usize = groups
        .iter()
        .map(|(_, u)| u.len() + 1)
        .sum::<usize>()
        .max(1);
    let top = groups
        .iter()
        .flat_map(|(_, u)| u.iter().map(|x| x.1))
        .fold(1.0, f64::max)
        * 1.1;
    let caption = match run.report.uplink_imbalance {
        Some(m) => format!(
            "{}: uplink utilisation per leaf (worst max/mean {m:.2})",
            run.label
        ),
        None => format!("{}: uplink utilisation per leaf", run.label),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(10)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..slots as f64, 0.0..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("utilisation")
        .y_label_formatter(&|v| format!("{:.0}%", v * 100.0))
        .draw()
        .map_err(err)?;
    let mut x = 0.5;
    let mut bars = Vec::new();
    let mut labels = Vec::new();
    for (leaf, ups) in &groups {
        labels.push((leaf.to_string(), x + ups.len() as f64 / 2.0));
        for (_, u) in ups {
            bars.push(Rectangle::new([(x, 0.0), (x + 0.9, *u)], c.filled()));
            x += 1.0;
        }
        x += 1.0;
    }
    chart.draw_series(bars).map_err(err)?;
    chart
        .draw_series(labels.into_iter().map(|(name, cx)| {
            Text::new(name, (cx - 0.5, top * 0.97), ("sans-serif", 13).into_font())
        }))
        .map_err(err)?;
    Ok(())
}

/// The pause-spreading map, a panel per run.
fn pauses(runs: &[PlotRun<'_>]) -> Result<String, String> {
    // Every cable's pauses are what the switch ends sent, at most.
    let most = runs
        .iter()
        .flat_map(|r| r.report.links.iter().map(|l| l.pause_tx + l.pause_rx))
        .max()
        .unwrap_or(0);
    let size = (SIZE.0.max(460 * runs.len() as u32), SIZE.1);
    per_run_panels(size, runs, false, |area, _, run| {
        pause_panel(area, run, most)
    })
}

/// One run's map: a row per tier (hosts at the bottom), a line per cable,
/// thicker and redder with the pause frames it carried either way.
/// `most`: the pause frames of the busiest cable of every run, so the
/// panels' lines compare.
fn pause_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    run: &PlotRun<'_>,
    most: u64,
) -> Result<(), String> {
    let r = run.report;
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    let title = match r.deepest_pause_tier {
        Some(t) => format!("{}: pauses reached tier {t} ({})", run.label, tier_name(t)),
        None => format!("{}: no PFC pauses", run.label),
    };
    area.draw(&Text::new(title, (10, 8), ("sans-serif", 16).into_font()))
        .map_err(err)?;
    // Nodes by tier.
    let mut tiers: BTreeMap<u8, Vec<String>> = BTreeMap::new();
    let mut add = |tier: u8, name: String| {
        let row = tiers.entry(tier).or_default();
        if !row.contains(&name) {
            row.push(name);
        }
    };
    for l in &r.link_load {
        add(l.tier, l.switch.clone());
        if l.peer_tier > 0 {
            add(l.peer_tier, node_of(&l.peer).to_string());
        }
    }
    let hosts = r.link_load.iter().filter(|l| l.peer_tier == 0).count();
    let draw_hosts = hosts <= MAX_MAP_HOSTS;
    if draw_hosts {
        for l in r.link_load.iter().filter(|l| l.peer_tier == 0) {
            add(0, l.peer.clone());
        }
    }
    for row in tiers.values_mut() {
        row.sort_by(|a, b| crate::natural::cmp(a, b));
    }
    let top_tier = tiers.keys().copied().max().unwrap_or(1);
    let low_tier = tiers.keys().copied().min().unwrap_or(0);
    let span = i32::from(top_tier - low_tier).max(1);
    let mut at: BTreeMap<(u8, &str), (i32, i32)> = BTreeMap::new();
    for (tier, row) in &tiers {
        let y = 50 + (h - 100) * i32::from(top_tier - tier) / span;
        let n = row.len() as i32;
        for (i, name) in row.iter().enumerate() {
            let x = (w * (2 * i as i32 + 1)) / (2 * n.max(1));
            at.insert((*tier, name.as_str()), (x, y));
        }
    }
    // Pause frames per cable, both ways: what each switch end sent; a host
    // end's are what its switch port received.
    let pfc: BTreeMap<(&str, &str), (u64, u64)> = r
        .links
        .iter()
        .map(|l| {
            (
                (l.switch.as_str(), l.interface.as_str()),
                (l.pause_tx, l.pause_rx),
            )
        })
        .collect();
    let mut cables: BTreeMap<(String, String), Cable> = BTreeMap::new();
    for l in &r.link_load {
        let me = format!("{}:{}", l.switch, l.interface);
        let key = if me < l.peer {
            (me.clone(), l.peer.clone())
        } else {
            (l.peer.clone(), me.clone())
        };
        let (tx, rx) = pfc
            .get(&(l.switch.as_str(), l.interface.as_str()))
            .copied()
            .unwrap_or((0, 0));
        let host_side = if l.peer_tier == 0 { rx } else { 0 };
        let far = if l.peer_tier == 0 {
            (0, l.peer.clone())
        } else {
            (l.peer_tier, node_of(&l.peer).to_string())
        };
        let e = cables
            .entry(key)
            .or_insert(((l.tier, l.switch.clone()), far, 0));
        e.2 += tx + host_side;
    }
    let most = most.max(1);
    for (a, b, frames) in cables.values() {
        let (Some(pa), Some(pb)) = (at.get(&(a.0, a.1.as_str())), at.get(&(b.0, b.1.as_str())))
        else {
            continue;
        };
        let style = if *frames == 0 {
            RGBColor(200, 200, 200).stroke_width(1)
        } else {
            let f = (*frames as f64 / most as f64).min(1.0);
            RGBColor(150 + (105.0 * f) as u8, 40, 40).stroke_width(2 + (8.0 * f).round() as u32)
        };
        area.draw(&PathElement::new(vec![*pa, *pb], style))
            .map_err(err)?;
    }
    for ((tier, name), (x, y)) in &at {
        let (radius, size) = if *tier == 0 { (3u32, 9) } else { (7u32, 12) };
        area.draw(&Circle::new((*x, *y), radius, BLACK.filled()))
            .map_err(err)?;
        if *tier > 0 || at.len() <= 48 {
            let label_y = if *tier == 0 { y + 6 } else { y - 22 };
            area.draw(&Text::new(
                name.to_string(),
                (x - 20, label_y),
                ("sans-serif", size).into_font(),
            ))
            .map_err(err)?;
        }
    }
    if !draw_hosts {
        area.draw(&Text::new(
            format!("({hosts} NICs below the leaves not drawn)"),
            (10, h - 20),
            ("sans-serif", 12).into_font(),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// A cable on the map: its ends as (tier, node) and the pause frames it
/// carried.
type Cable = ((u8, String), (u8, String), u64);

/// The node of `node:port`.
fn node_of(end: &str) -> &str {
    end.split_once(':').map_or(end, |(n, _)| n)
}

/// One sampled queue's depth over time, a line per run.
fn queue(runs: &[PlotRun<'_>], name: &str) -> Result<String, String> {
    let series: Vec<(&str, Vec<(f64, f64)>)> = runs
        .iter()
        .filter_map(|r| {
            let q = r.report.queues.iter().find(|q| q.name == name)?;
            let pts = q
                .t_us
                .iter()
                .zip(&q.bytes)
                .map(|(t, b)| (*t, *b as f64 / 1e3))
                .collect();
            Some((r.label, pts))
        })
        .collect();
    let t_max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.0))
        .fold(1.0, f64::max);
    let kb_max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.1))
        .fold(1.0, f64::max)
        * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let mut chart = linear_chart(&root, format!("queue depth: {name}"), t_max, kb_max)?;
        chart
            .configure_mesh()
            .x_desc("virtual time (us)")
            .y_desc("queued (KB)")
            .draw()
            .map_err(err)?;
        for (i, (label, pts)) in series.into_iter().enumerate() {
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(err)?
                .label(label)
                .legend(swatch(c));
        }
        draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}
