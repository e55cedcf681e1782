//! The storm's results as an SVG chart: calls and completion time against
//! the number of clients, one line per strategy. Plain SVG text, so that
//! the example needs no plotting crate.

use std::fmt::Write as _;

use crate::overload::{DEMAND, OVERLOAD, Protection, Run, TICKS};
use crate::sim::{Cost, Strategy};

const PANEL_WIDTH: f64 = 460.0;
const PANEL_HEIGHT: f64 = 300.0;
const MARGIN: f64 = 60.0;
const LEGEND_HEIGHT: f64 = 70.0;
const COLOURS: [&str; 6] = [
    "#7f7f7f", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e",
];

/// One row of results: the client count and each strategy's mean cost, in
/// the order of [`Strategy::ALL`].
pub type Row = (usize, Vec<Cost>);

/// The chart of `rows` as an SVG document.
pub fn svg(rows: &[Row]) -> String {
    let width = 2.0 * (PANEL_WIDTH + 2.0 * MARGIN);
    let height = PANEL_HEIGHT + 2.0 * MARGIN + LEGEND_HEIGHT;
    let mut out = opened(width, height);
    panel(&mut out, rows, 0.0, "Calls (writes sent)", |cost| {
        cost.calls
    });
    panel(
        &mut out,
        rows,
        PANEL_WIDTH + 2.0 * MARGIN,
        "Completion time (ms)",
        |cost| cost.time_ms,
    );
    legend(&mut out, PANEL_HEIGHT + 2.0 * MARGIN);
    out.push_str("</svg>\n");
    out
}

fn panel(out: &mut String, rows: &[Row], left: f64, title: &str, value: fn(&Cost) -> f64) {
    let (x0, y0) = (left + MARGIN, MARGIN);
    let max_clients = rows.iter().map(|(n, _)| *n).max().unwrap_or(1) as f64;
    let max_value = rows
        .iter()
        .flat_map(|(_, costs)| costs.iter().map(value))
        .fold(0.0, f64::max);
    let top = nice_ceiling(max_value);
    let x = |clients: f64| x0 + clients / max_clients * PANEL_WIDTH;
    let y = |v: f64| y0 + PANEL_HEIGHT - v / top * PANEL_HEIGHT;

    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="14">{title}</text>"#,
        x0 + PANEL_WIDTH / 2.0,
        y0 - 20.0
    );
    for tick in 0..=5 {
        let v = top * f64::from(tick) / 5.0;
        grid_line(out, x0, PANEL_WIDTH, y(v), v);
    }
    for (n, _) in rows.iter().filter(|(n, _)| n % 30 == 10) {
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{n}</text>"#,
            x(*n as f64),
            y0 + PANEL_HEIGHT + 16.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">clients</text>"#,
        x0 + PANEL_WIDTH / 2.0,
        y0 + PANEL_HEIGHT + 36.0
    );
    let _ = writeln!(
        out,
        r#"<rect x="{x0}" y="{y0}" width="{PANEL_WIDTH}" height="{PANEL_HEIGHT}" fill="none" stroke="black"/>"#
    );
    for (index, colour) in COLOURS.iter().enumerate() {
        let points: Vec<String> = rows
            .iter()
            .map(|(n, costs)| format!("{:.1},{:.1}", x(*n as f64), y(value(&costs[index]))))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            points.join(" ")
        );
    }
}

fn legend(out: &mut String, top: f64) {
    for (index, strategy) in Strategy::ALL.iter().enumerate() {
        let (column, line) = (index % 3, index / 3);
        let x = MARGIN + column as f64 * 300.0;
        let y = top + 10.0 + line as f64 * 22.0;
        let _ = writeln!(
            out,
            r#"<line x1="{x}" x2="{}" y1="{y}" y2="{y}" stroke="{}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            x + 24.0,
            COLOURS[index],
            x + 30.0,
            y + 4.0,
            strategy.name().replace('`', "")
        );
    }
}

/// A grid line across a panel from `x0`, `width` wide, at height `y`,
/// labelled `value` on its left.
fn grid_line(out: &mut String, x0: f64, width: f64, y: f64, value: f64) {
    let _ = writeln!(
        out,
        r##"<line x1="{x0}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#e0e0e0"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
        x0 + width,
        x0 - 6.0,
        y + 4.0,
        value.round(),
    );
}

/// An SVG document of `width` by `height` on white, still open.
fn opened(width: f64, height: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="{width}" height="{height}" fill="white"/>"#
    );
    out
}

/// The smallest of 1, 2 or 5 times a power of ten at or above `v`.
fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    let power = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&c| c >= v)
        .unwrap_or(10.0 * power)
}

/// The overload scenario as an SVG chart: the attempts the backend
/// received each second under each protection, and its capacity.
pub fn overload_svg(runs: &[(Protection, Run)]) -> String {
    let width = PANEL_WIDTH * 2.0 + 2.0 * MARGIN;
    let height = PANEL_HEIGHT + 2.0 * MARGIN + LEGEND_HEIGHT;
    let (x0, y0) = (MARGIN, MARGIN);
    let top = runs
        .iter()
        .flat_map(|(_, run)| run.ticks.iter().map(|t| t.received as f64))
        .fold(0.0, f64::max);
    // On a logarithmic scale from 10: the throttled lines sit near the
    // capacity, a hundredth of the unprotected one's top.
    let top = 10f64.powf(top.max(100.0).log10().ceil());
    let bottom = 10.0;
    let panel_width = PANEL_WIDTH * 2.0;
    let x = |tick: f64| x0 + tick / TICKS as f64 * panel_width;
    let y = |v: f64| {
        let v = v.clamp(bottom, top);
        y0 + PANEL_HEIGHT - (v / bottom).log10() / (top / bottom).log10() * PANEL_HEIGHT
    };
    let mut out = opened(width, height);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="14">Attempts the backend receives a second, logarithmic ({} clients, demand {DEMAND} a second)</text>"#,
        x0 + panel_width / 2.0,
        y0 - 20.0,
        crate::overload::CLIENTS
    );
    let mut v = bottom;
    while v <= top {
        grid_line(&mut out, x0, panel_width, y(v), v);
        v *= 10.0;
    }
    for second in (0..=TICKS).step_by(120) {
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{second}</text>"#,
            x(second as f64),
            y0 + PANEL_HEIGHT + 16.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">seconds (capacity a tenth of the demand from {} s to {} s)</text>"#,
        x0 + panel_width / 2.0,
        y0 + PANEL_HEIGHT + 36.0,
        OVERLOAD.start,
        OVERLOAD.end
    );
    let _ = writeln!(
        out,
        r#"<rect x="{x0}" y="{y0}" width="{panel_width}" height="{PANEL_HEIGHT}" fill="none" stroke="black"/>"#
    );
    // The capacity, where it is below the chart's top.
    let capacity = DEMAND as f64 / 10.0;
    let _ = writeln!(
        out,
        r#"<line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="black" stroke-dasharray="4 3"/>"#,
        x(OVERLOAD.start as f64),
        x(OVERLOAD.end as f64),
        y(capacity),
        y(capacity)
    );
    for (index, (_, run)) in runs.iter().enumerate() {
        let points: Vec<String> = run
            .ticks
            .iter()
            .enumerate()
            .map(|(tick, t)| format!("{:.1},{:.1}", x(tick as f64), y(t.received as f64)))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5"/>"#,
            points.join(" "),
            COLOURS[(index + 1) % COLOURS.len()]
        );
    }
    let legend_top = PANEL_HEIGHT + 2.0 * MARGIN;
    for (index, (protection, _)) in runs.iter().enumerate() {
        let lx = MARGIN + index as f64 * 240.0;
        let ly = legend_top + 10.0;
        let _ = writeln!(
            out,
            r#"<line x1="{lx}" x2="{}" y1="{ly}" y2="{ly}" stroke="{}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            lx + 24.0,
            COLOURS[(index + 1) % COLOURS.len()],
            lx + 30.0,
            ly + 4.0,
            protection.name().replace('`', "")
        );
    }
    let ly = legend_top + 34.0;
    let _ = writeln!(
        out,
        r#"<line x1="{MARGIN}" x2="{}" y1="{ly}" y2="{ly}" stroke="black" stroke-dasharray="4 3"/><text x="{}" y="{}">the backend's capacity in the overload</text>"#,
        MARGIN + 24.0,
        MARGIN + 30.0,
        ly + 4.0,
    );
    out.push_str("</svg>\n");
    out
}
