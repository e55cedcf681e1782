//! The storm's results as an SVG chart: calls and completion time against
//! the number of clients, one line per strategy. Plain SVG text, so that
//! the example needs no plotting crate.

use std::fmt::Write as _;

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
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="{width}" height="{height}" fill="white"/>"#
    );
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
        let _ = writeln!(
            out,
            r##"<line x1="{x0}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#e0e0e0"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            x0 + PANEL_WIDTH,
            x0 - 6.0,
            y(v) + 4.0,
            v.round(),
            y = y(v)
        );
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
