//! `railyard replay --plot DIR`: what the queues did over the replay's
//! virtual time, as SVG pictures.
//!
//! The replay samples the switch at a fixed virtual interval (`--plot-every`)
//! from its public accessors, before the poll that moves time on, so the
//! samples see the state that held since the previous poll and nothing in
//! forwarding changes. Counters are sampled as running totals, so thinning
//! the points keeps every ECN mark and PFC frame: when a series would
//! pass [`MAX_POINTS`], every other sample is dropped and the interval
//! doubles (the report says so), which bounds memory whatever the trace's
//! length. Written per queue that held a packet: its depth with the WRED
//! and PFC thresholds and the marks and pauses as events
//! (`queue-IF-qN.svg`), its sojourn-time CDF (`sojourn-IF-qN.svg`); and per
//! ECMP/DLB group, the bytes each member sent per interval
//! (`multipath-PREFIX.svg`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use railyard_dataplane::clock::Nanos;
use railyard_dataplane::model::{InterfaceModel, PortId, SwitchModel, ThresholdUnit};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::queue::NUM_QUEUES;

use crate::plotting::{colour, draw_legend, err, linear_chart, swatch, SIZE};

/// The sampling interval when `--plot-every` is not given.
pub const DEFAULT_PLOT_EVERY: Nanos = 10_000;
/// Most samples a series keeps; past it the interval doubles.
pub const MAX_POINTS: usize = 4096;

/// One queue at one sample: its depth and its counters' running totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueuePoint {
    /// Bytes queued.
    pub depth_bytes: u64,
    /// Packets queued.
    pub depth_packets: u64,
    /// Packets marked CE so far.
    pub ecn_marked: u64,
    /// PFC frames of this queue's priority on its port so far: pauses
    /// sent, resumes sent, pauses received, resumes received.
    pub pfc: [u64; 4],
}

/// Samples of one series, from sample `start` on (earlier ones are zero:
/// the series had not moved yet).
#[derive(Debug, Clone, Default)]
struct Series<T> {
    start: usize,
    values: Vec<T>,
}

impl<T: Copy + Default> Series<T> {
    /// The value at sample `i`.
    fn at(&self, i: usize) -> T {
        i.checked_sub(self.start)
            .and_then(|k| self.values.get(k).copied())
            .unwrap_or_default()
    }

    /// Keeps the samples of even index, renumbered.
    fn halve(&mut self) {
        let first = self.start % 2;
        self.values = self.values.iter().skip(first).step_by(2).copied().collect();
        self.start = self.start.div_ceil(2);
    }
}

/// A queue's configured thresholds, as the switch model has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// WRED `(min, max, unit)`, when the queue has WRED.
    pub wred: Option<(u64, u64, ThresholdUnit)>,
    /// PFC ingress `(xoff_bytes, xon_bytes)` of the priority, when it is
    /// lossless on the port.
    pub pfc: Option<(u64, u64)>,
}

/// One active queue's samples.
#[derive(Debug, Clone)]
pub struct QueueTrace {
    /// Interface name.
    pub interface: String,
    /// Queue (qos-group, and PFC priority).
    pub queue: usize,
    /// Its thresholds.
    pub thresholds: Thresholds,
    series: Series<QueuePoint>,
    /// Sojourn CDF at the end of the replay: `(ns, fraction)`.
    pub sojourn_cdf: Vec<(Nanos, f64)>,
}

/// What `--plot` collected over a replay; [`PlotSampler::finish`] makes it.
#[derive(Debug, Clone, Default)]
pub struct PlotData {
    /// Sample times, virtual nanoseconds from the first input frame.
    pub times: Vec<Nanos>,
    /// The interval the samples ended up at.
    pub every: Nanos,
    /// The interval asked for; below `every` when the points were thinned.
    pub requested_every: Nanos,
    /// Queues that held at least one packet, by `(port, queue)`.
    pub queues: BTreeMap<(usize, usize), QueueTrace>,
    /// Per ECMP/DLB group (by prefix), per member interface, bytes sent so
    /// far at each sample.
    groups: BTreeMap<String, BTreeMap<String, Series<u64>>>,
}

impl PlotData {
    /// True when the samples were thinned to stay within [`MAX_POINTS`].
    pub fn thinned(&self) -> bool {
        self.every > self.requested_every
    }

    /// A queue's samples as `(time_ns, point)`.
    pub fn queue_points(&self, port: usize, queue: usize) -> Vec<(Nanos, QueuePoint)> {
        let Some(q) = self.queues.get(&(port, queue)) else {
            return Vec::new();
        };
        self.times
            .iter()
            .enumerate()
            .map(|(i, t)| (*t, q.series.at(i)))
            .collect()
    }

    /// The groups sampled, by prefix, with their members' names.
    pub fn groups(&self) -> impl Iterator<Item = (&str, Vec<&str>)> {
        self.groups
            .iter()
            .map(|(g, m)| (g.as_str(), m.keys().map(String::as_str).collect()))
    }

    /// A group member's bytes sent per interval, `(time_ns, bytes)` at the
    /// end of each interval: the difference of its running total between
    /// samples (the last interval, up to the end of the replay, may be
    /// shorter than [`every`](Self::every)).
    pub fn member_load(&self, group: &str, member: &str) -> Vec<(Nanos, f64)> {
        let Some(s) = self.groups.get(group).and_then(|g| g.get(member)) else {
            return Vec::new();
        };
        self.times
            .windows(2)
            .enumerate()
            .map(|(i, w)| (w[1], s.at(i + 1).saturating_sub(s.at(i)) as f64))
            .collect()
    }
}

/// Samples a switch at a fixed virtual interval for `--plot`.
pub struct PlotSampler {
    first: Nanos,
    next: Nanos,
    data: PlotData,
    names: Vec<String>,
    thresholds: Vec<[Thresholds; NUM_QUEUES]>,
}

impl Thresholds {
    /// Queue `q`'s thresholds on the interface `m`.
    pub fn of(m: &InterfaceModel, q: usize) -> Thresholds {
        Thresholds {
            wred: m.queues[q].wred.map(|w| (w.min, w.max, w.unit)),
            pfc: (m.pfc.enabled_priorities >> q & 1 == 1)
                .then(|| (m.pfc.pg[q].xoff_bytes, m.pfc.pg[q].xon_bytes)),
        }
    }
}

impl PlotSampler {
    /// A sampler for a switch built from `model` whose replay starts at
    /// `first`, sampling every `every` ns (0 reads as 1).
    pub fn new(model: &SwitchModel, first: Nanos, every: Nanos) -> Self {
        let every = every.max(1);
        let thresholds = model
            .interfaces
            .iter()
            .map(|m| std::array::from_fn(|q| Thresholds::of(m, q)))
            .collect();
        PlotSampler {
            first,
            next: first,
            data: PlotData {
                every,
                requested_every: every,
                ..PlotData::default()
            },
            names: model.interfaces.iter().map(|m| m.name.clone()).collect(),
            thresholds,
        }
    }

    /// Records a sample for every interval boundary up to `now`; call it
    /// before the switch polls at `now` (the switch has not changed since
    /// its last poll, so one look serves every boundary passed).
    pub fn observe(&mut self, sw: &Switch, now: Nanos) {
        if now < self.next {
            return;
        }
        let (queues, groups) = self.look(sw);
        while self.next <= now {
            self.push(self.next - self.first, &queues, &groups);
            self.next += self.data.every;
        }
    }

    /// A last sample at `now` and the queues' sojourn distributions.
    pub fn finish(mut self, sw: &Switch, now: Nanos) -> PlotData {
        self.observe(sw, now);
        if self.data.times.last() != Some(&(now - self.first)) {
            let (queues, groups) = self.look(sw);
            self.push(now - self.first, &queues, &groups);
        }
        for (&(p, q), t) in &mut self.data.queues {
            if let Some(qs) = sw.queues(p as PortId) {
                t.sojourn_cdf = thin(qs.sojourn(q).cdf(), MAX_POINTS);
            }
        }
        self.data
    }

    /// Every queue that has moved and every group member, now.
    #[allow(clippy::type_complexity)] // Two flat lists, read once by `push`.
    fn look(
        &self,
        sw: &Switch,
    ) -> (
        Vec<((usize, usize), QueuePoint)>,
        Vec<(String, String, u64)>,
    ) {
        let stats = sw.stats();
        let mut queues = Vec::new();
        for (p, name) in self.names.iter().enumerate() {
            let Some(i) = stats.interfaces.get(name) else {
                continue;
            };
            let qs = sw.queues(p as PortId);
            for q in 0..NUM_QUEUES {
                let qstat = i.queues.iter().find(|s| usize::from(s.queue) == q);
                let point = QueuePoint {
                    depth_bytes: qs.map_or(0, |s| s.depth_bytes(q)),
                    depth_packets: qs.map_or(0, |s| s.depth_packets(q) as u64),
                    ecn_marked: qstat.map_or(0, |s| s.ecn_marked),
                    pfc: [
                        i.pfc.tx_pause[q],
                        i.pfc.tx_resume[q],
                        i.pfc.rx_pause[q],
                        i.pfc.rx_resume[q],
                    ],
                };
                let sent = qstat.is_some_and(|s| s.tx_packets > 0);
                if point != QueuePoint::default() || sent || self.data.queues.contains_key(&(p, q))
                {
                    queues.push(((p, q), point));
                }
            }
        }
        let groups = stats
            .load_balancing
            .iter()
            .flat_map(|(g, s)| {
                s.members
                    .iter()
                    .map(move |m| (g.clone(), m.interface.clone(), m.bytes))
            })
            .collect();
        (queues, groups)
    }

    /// Appends one sample taken at `t` (from the first frame), thinning
    /// when the series are full.
    fn push(
        &mut self,
        t: Nanos,
        queues: &[((usize, usize), QueuePoint)],
        groups: &[(String, String, u64)],
    ) {
        let d = &mut self.data;
        let i = d.times.len();
        d.times.push(t);
        for &((p, q), point) in queues {
            let trace = d.queues.entry((p, q)).or_insert_with(|| QueueTrace {
                interface: self.names.get(p).cloned().unwrap_or_default(),
                queue: q,
                thresholds: self.thresholds[p][q],
                series: Series {
                    start: i,
                    values: Vec::new(),
                },
                sojourn_cdf: Vec::new(),
            });
            trace.series.values.push(point);
        }
        for (g, m, bytes) in groups {
            d.groups
                .entry(g.clone())
                .or_default()
                .entry(m.clone())
                .or_insert_with(|| Series {
                    start: i,
                    values: Vec::new(),
                })
                .values
                .push(*bytes);
        }
        if d.times.len() >= MAX_POINTS {
            d.times = d.times.iter().step_by(2).copied().collect();
            for t in d.queues.values_mut() {
                t.series.halve();
            }
            for s in d.groups.values_mut().flat_map(|g| g.values_mut()) {
                s.halve();
            }
            d.every *= 2;
        }
    }
}

/// At most `n` of `v`'s points, evenly spread, the last one kept.
fn thin<T: Copy>(v: Vec<T>, n: usize) -> Vec<T> {
    if v.len() <= n || n < 2 {
        return v;
    }
    let step = v.len().div_ceil(n - 1);
    let last = v[v.len() - 1];
    let mut out: Vec<T> = v.into_iter().step_by(step).collect();
    out.push(last);
    out
}

/// A name as a file name part: `/` and `:` become `_`.
fn file_part(name: &str) -> String {
    name.replace(['/', ':'], "_")
}

/// The file a queue's depth goes to, e.g. `queue-Ethernet1_4-q3.svg`.
pub fn queue_file(interface: &str, queue: usize) -> String {
    format!("queue-{}-q{queue}.svg", file_part(interface))
}

/// The file a queue's sojourn CDF goes to.
pub fn sojourn_file(interface: &str, queue: usize) -> String {
    format!("sojourn-{}-q{queue}.svg", file_part(interface))
}

/// The file a group's member load goes to, e.g. `multipath-10.0.2.0_24.svg`.
pub fn group_file(prefix: &str) -> String {
    format!("multipath-{}.svg", file_part(prefix))
}

/// Shortest `--plot-every`: finer samples only cost memory and time.
pub const MIN_PLOT_EVERY: Nanos = 10;

/// Reads `--plot-every`: a duration such as `500ns`, `10us` or `1ms`.
///
/// # Errors
/// Text that is not a duration, or one below [`MIN_PLOT_EVERY`].
pub fn parse_plot_every(text: &str) -> Result<Nanos, String> {
    let d = humantime::parse_duration(text)
        .map_err(|e| format!("{e}; expected a duration such as 1us or 10us"))?;
    match Nanos::try_from(d.as_nanos()) {
        Ok(ns) if ns >= MIN_PLOT_EVERY => Ok(ns),
        Ok(_) => Err(format!(
            "{text} is shorter than the {MIN_PLOT_EVERY}ns --plot-every allows"
        )),
        Err(_) => Err(format!("{text} is too long")),
    }
}

/// Says where the pictures went and, when the samples were thinned, at
/// what interval they ended up.
///
/// # Errors
/// `out` cannot be written.
pub fn print_written(
    out: &mut dyn std::io::Write,
    dir: &Path,
    data: &PlotData,
    files: usize,
) -> std::io::Result<()> {
    writeln!(out, "{files} plots in {}", dir.display())?;
    if data.thinned() {
        writeln!(
            out,
            "  (samples every {} instead of {}: at most {MAX_POINTS} points per series)",
            crate::units::duration(data.every),
            crate::units::duration(data.requested_every)
        )?;
    }
    Ok(())
}

/// Checks that `dir` can take the pictures (creating it if missing), so a
/// bad directory fails before a long replay rather than after.
///
/// # Errors
/// The directory cannot be created, or is not a directory.
pub fn prepare_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("--plot {}: {e}", dir.display()))?;
    if !dir.is_dir() {
        return Err(format!("--plot {}: not a directory", dir.display()));
    }
    Ok(())
}

/// Writes every picture `data` has material for into `dir` (created if
/// missing). Returns the files written.
///
/// # Errors
/// The directory or a file cannot be written.
pub fn write_all(dir: &Path, data: &PlotData) -> Result<Vec<PathBuf>, String> {
    prepare_dir(dir)?;
    let mut written = Vec::new();
    let mut save = |name: String, svg: String| -> Result<(), String> {
        let path = dir.join(name);
        std::fs::write(&path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
        Ok(())
    };
    for (&(p, q), t) in &data.queues {
        save(queue_file(&t.interface, q), queue_svg(data, p, q)?)?;
        if !t.sojourn_cdf.is_empty() {
            save(sojourn_file(&t.interface, q), sojourn_svg(t)?)?;
        }
    }
    for (g, _) in data.groups() {
        save(group_file(g), group_svg(data, g)?)?;
    }
    Ok(written)
}

/// Kinds of event marker, with their legend text and colour.
const EVENTS: [(&str, RGBColor); 5] = [
    ("ECN marked", RGBColor(214, 39, 40)),
    ("PFC pause sent", RGBColor(148, 103, 189)),
    ("PFC resume sent", RGBColor(44, 160, 44)),
    ("PFC pause received", RGBColor(140, 86, 75)),
    ("PFC resume received", RGBColor(23, 190, 207)),
];

/// A threshold for the legend: `150 KB`, `153.6 KB` or `40 packets`.
fn amount(v: u64, packets: bool) -> String {
    if packets {
        format!("{v} packets")
    } else {
        let kb = format!("{:.1}", v as f64 / 1e3);
        format!("{} KB", kb.strip_suffix(".0").unwrap_or(&kb))
    }
}

/// One queue's depth over time with its thresholds and events.
fn queue_svg(data: &PlotData, port: usize, queue: usize) -> Result<String, String> {
    let Some(t) = data.queues.get(&(port, queue)) else {
        return Err(format!("no samples of queue {queue} of port {port}"));
    };
    queue_depth_svg(
        &t.interface,
        queue,
        &t.thresholds,
        &data.queue_points(port, queue),
        TimeAxis::VIRTUAL_US,
    )
}

/// How a queue picture's time axis reads.
#[derive(Debug, Clone, Copy)]
pub struct TimeAxis {
    /// Nanoseconds per unit of the axis.
    pub ns_per_unit: f64,
    /// The axis' label.
    pub label: &'static str,
}

impl TimeAxis {
    /// A replay's or simulation's virtual time, in microseconds.
    pub const VIRTUAL_US: TimeAxis = TimeAxis {
        ns_per_unit: 1e3,
        label: "virtual time (us)",
    };
    /// A live switch's recent past, in seconds.
    pub const SECONDS: TimeAxis = TimeAxis {
        ns_per_unit: 1e9,
        label: "time (s)",
    };
}

/// The depth of queue `queue` of `interface` over time (`pts`: time in ns
/// from the first sample, the queue then), with its WRED and PFC
/// thresholds as lines and the samples whose ECN or PFC counters moved as
/// markers: the picture `replay --plot` draws per queue and `show queuing
/// interface NAME --plot FILE` draws from a live switch's ring.
///
/// # Errors
/// Drawing failed.
pub fn queue_depth_svg(
    interface: &str,
    queue: usize,
    thresholds: &Thresholds,
    pts: &[(Nanos, QueuePoint)],
    axis: TimeAxis,
) -> Result<String, String> {
    let x = |t: Nanos| t as f64 / axis.ns_per_unit;
    // WRED counted in packets: draw the depth in packets, where its lines
    // are; PFC's byte thresholds have no place on that axis.
    let packets = matches!(thresholds.wred, Some((_, _, ThresholdUnit::Packets)));
    let scale = |p: &QueuePoint| {
        if packets {
            p.depth_packets as f64
        } else {
            p.depth_bytes as f64 / 1e3
        }
    };
    let unit = |v: u64| if packets { v as f64 } else { v as f64 / 1e3 };
    let mut lines: Vec<(String, f64, RGBColor)> = Vec::new();
    if let Some((min, max, _)) = thresholds.wred {
        lines.push((
            format!("WRED min {}", amount(min, packets)),
            unit(min),
            RGBColor(255, 127, 14),
        ));
        lines.push((
            format!("WRED max {}", amount(max, packets)),
            unit(max),
            RGBColor(214, 39, 40),
        ));
    }
    if let (Some((xoff, xon)), false) = (thresholds.pfc, packets) {
        lines.push((
            format!("PFC xOFF (ingress) {}", amount(xoff, false)),
            unit(xoff),
            RGBColor(148, 103, 189),
        ));
        lines.push((
            format!("PFC xON (ingress) {}", amount(xon, false)),
            unit(xon),
            RGBColor(44, 160, 44),
        ));
    }
    let t_max = pts.last().map_or(1.0, |p| x(p.0)).max(1e-3);
    let y_top = pts
        .iter()
        .map(|(_, p)| scale(p))
        .chain(lines.iter().map(|l| l.1))
        .fold(1.0, f64::max)
        * 1.25;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let mut chart = linear_chart(
            &root,
            format!("queue depth: {interface} queue {queue}"),
            t_max,
            y_top,
        )?;
        chart
            .configure_mesh()
            .x_desc(axis.label)
            .y_desc(if packets {
                "queued (packets)"
            } else {
                "queued (KB)"
            })
            .draw()
            .map_err(err)?;
        let c = colour(0);
        chart
            .draw_series(LineSeries::new(
                pts.iter().map(|(t, p)| (x(*t), scale(p))),
                c.stroke_width(2),
            ))
            .map_err(err)?
            .label(format!("depth of queue {queue}"))
            .legend(swatch(c));
        for (label, y, c) in lines {
            chart
                .draw_series(LineSeries::new([(0.0, y), (t_max, y)], c.stroke_width(1)))
                .map_err(err)?
                .label(label)
                .legend(swatch(c));
        }
        // Events: a row of markers each near the top, at the samples whose
        // running total moved.
        for (k, (label, c)) in EVENTS.iter().enumerate() {
            let y = y_top * (0.96 - 0.04 * k as f64);
            let at: Vec<f64> = pts
                .windows(2)
                .filter(|w| {
                    let (a, b) = (&w[0].1, &w[1].1);
                    if k == 0 {
                        b.ecn_marked > a.ecn_marked
                    } else {
                        b.pfc[k - 1] > a.pfc[k - 1]
                    }
                })
                .map(|w| x(w[1].0))
                .collect();
            if at.is_empty() {
                continue;
            }
            let c = *c;
            chart
                .draw_series(
                    at.into_iter()
                        .map(|x| TriangleMarker::new((x, y), 4, c.filled())),
                )
                .map_err(err)?
                .label(*label)
                .legend(swatch(c));
        }
        // Left of the middle: the event markers have the top rows, and a
        // queue that fills and oscillates does so on the right, after its
        // first rise; the upper right would cover both.
        draw_legend(&mut chart, SeriesLabelPosition::MiddleLeft)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One queue's sojourn-time CDF.
fn sojourn_svg(t: &QueueTrace) -> Result<String, String> {
    let x_max = t
        .sojourn_cdf
        .last()
        .map_or(1.0, |p| p.0 as f64 / 1e3)
        .max(1e-3)
        * 1.05;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let mut chart = linear_chart(
            &root,
            format!("sojourn time CDF: {} queue {}", t.interface, t.queue),
            x_max,
            1.0,
        )?;
        chart
            .configure_mesh()
            .x_desc("sojourn (us)")
            .y_desc("fraction of packets")
            .draw()
            .map_err(err)?;
        // A step per histogram bucket: the fraction holds until the next.
        let mut steps = Vec::with_capacity(t.sojourn_cdf.len() * 2 + 1);
        let mut prev = 0.0;
        steps.push((0.0, 0.0));
        for &(ns, f) in &t.sojourn_cdf {
            let x = ns as f64 / 1e3;
            steps.push((x, prev));
            steps.push((x, f));
            prev = f;
        }
        let c = colour(0);
        chart
            .draw_series(LineSeries::new(steps, c.stroke_width(2)))
            .map_err(err)?
            .label(format!("queue {}", t.queue))
            .legend(swatch(c));
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One group's bytes per member per interval.
fn group_svg(data: &PlotData, group: &str) -> Result<String, String> {
    let members: Vec<(String, Vec<(f64, f64)>)> = data
        .groups()
        .filter(|(g, _)| *g == group)
        .flat_map(|(_, m)| m)
        .map(|m| {
            let pts = data
                .member_load(group, m)
                .into_iter()
                .map(|(t, b)| (t as f64 / 1e3, b / 1e3))
                .collect();
            (m.to_string(), pts)
        })
        .collect();
    let t_max = data.times.last().map_or(1.0, |t| *t as f64 / 1e3).max(1e-3);
    let y_max = members
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.1))
        .fold(1.0, f64::max)
        * 1.15;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let mut chart = linear_chart(&root, format!("multipath load: {group}"), t_max, y_max)?;
        chart
            .configure_mesh()
            .x_desc("virtual time (us)")
            .y_desc(format!(
                "KB sent per {}",
                crate::units::duration(data.every)
            ))
            .draw()
            .map_err(err)?;
        for (i, (m, pts)) in members.into_iter().enumerate() {
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(err)?
                .label(m)
                .legend(swatch(c));
        }
        draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_keeps_the_even_samples_of_late_series() {
        let mut s = Series {
            start: 3,
            values: vec![3u64, 4, 5, 6, 7],
        };
        s.halve();
        assert_eq!((s.start, s.values.clone()), (2, vec![4, 6]));
        assert_eq!((s.at(1), s.at(2), s.at(3)), (0, 4, 6));
    }

    #[test]
    fn thinning_keeps_the_last_point() {
        let v: Vec<u32> = (0..100).collect();
        let t = thin(v, 10);
        assert!(t.len() <= 11);
        assert_eq!((t[0], *t.last().unwrap_or(&0)), (0, 99));
    }

    #[test]
    fn plot_intervals_read_as_nanoseconds_and_nonsense_is_refused() {
        assert_eq!(parse_plot_every("10us"), Ok(10_000));
        assert_eq!(parse_plot_every("500ns"), Ok(500));
        assert!(parse_plot_every("1ns").unwrap_err().contains("shorter"));
        assert!(parse_plot_every("often")
            .unwrap_err()
            .contains("expected a duration"));
    }

    /// The number after `key="` in `tag`.
    fn attr(tag: &str, key: &str) -> f64 {
        let at = tag.find(&format!(" {key}=\"")).expect(key) + key.len() + 3;
        tag[at..].split('"').next().unwrap().parse().expect(key)
    }

    #[test]
    fn the_queue_legend_covers_none_of_the_demo_incasts_depth_line() {
        // The demo as `railyard demo` runs it (the picture in the docs).
        let (_, report) =
            crate::demo::run_demo_sampled(20_000, Some(DEFAULT_PLOT_EVERY)).expect("demo");
        let data = report.plot.as_ref().expect("samples");
        let port = data
            .queues
            .iter()
            .find(|(_, t)| t.interface == "Ethernet1/4" && t.queue == 3)
            .map(|(k, _)| k.0)
            .expect("the incast queue");
        let svg = queue_svg(data, port, 3).expect("svg");
        // The legend's box (its translucent background), and the depth
        // line (the first series' colour).
        let tag = |start: &str| {
            svg.split('<')
                .find(|t| t.starts_with(start))
                .unwrap_or_else(|| panic!("{start} in the SVG"))
                .to_string()
        };
        let b = tag("rect x=\"80\"");
        assert!(b.contains("opacity=\"0.9\""), "{b}");
        let (x, y) = (attr(&b, "x"), attr(&b, "y"));
        let (w, h) = (attr(&b, "width"), attr(&b, "height"));
        let line = tag("polyline fill=\"none\" opacity=\"1\" stroke=\"#1F77B4\"");
        let points = line
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let points: Vec<(f64, f64)> = points
            .split_whitespace()
            .filter_map(|p| p.split_once(','))
            .map(|(a, b)| (a.parse().unwrap(), b.parse().unwrap()))
            .collect();
        let under = |x: f64, y: f64| {
            points
                .iter()
                .filter(|&&(a, b)| (x..=x + w).contains(&a) && (y..=y + h).contains(&b))
                .count()
        };
        assert!(
            points.len() > 100,
            "a depth line of {} points",
            points.len()
        );
        assert_eq!(under(x, y), 0, "points under the legend at {x},{y} {w}x{h}");
        // Where it was, at the top right, it hid the queue's oscillation.
        assert!(under(900.0 - 20.0 - w, 46.0) > 0, "the top right is busy");
    }

    #[test]
    fn the_demo_plots_its_ecmp_members_load_and_it_adds_up_to_their_counters() {
        let (_, report) =
            crate::demo::run_demo_sampled(2_000, Some(DEFAULT_PLOT_EVERY)).expect("demo");
        let data = report.plot.as_ref().expect("samples");
        let groups: Vec<_> = data.groups().collect();
        assert_eq!(groups.len(), 1, "the demo's one ECMP route");
        let (prefix, members) = &groups[0];
        assert_eq!(members.len(), 2, "two spine uplinks");
        let stats = &report.stats.load_balancing[*prefix];
        for m in members {
            let plotted: f64 = data.member_load(prefix, m).iter().map(|p| p.1).sum();
            let counted = stats
                .members
                .iter()
                .find(|s| s.interface == *m)
                .map_or(0, |s| s.bytes);
            assert!(counted > 0, "{m} carried traffic");
            assert_eq!(plotted, counted as f64, "{m}: every byte in some interval");
        }
        let dir = tempfile::tempdir().expect("tempdir");
        write_all(dir.path(), data).expect("plots");
        let svg = std::fs::read_to_string(dir.path().join(group_file(prefix))).expect("svg");
        assert!(svg.contains(&format!("multipath load: {prefix}")));
        assert!(
            svg.contains("KB sent per 10.0 us"),
            "axis names the interval"
        );
        for m in members {
            assert!(svg.contains(m), "{m} in the legend");
        }
    }

    #[test]
    fn a_file_in_place_of_the_directory_is_a_clear_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").expect("write");
        let e = prepare_dir(&file).unwrap_err();
        assert!(e.starts_with("--plot "), "{e}");
    }
}
