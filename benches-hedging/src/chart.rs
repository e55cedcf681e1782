//! The benchmark's latencies as an SVG chart: for each variant, the share
//! of calls slower than each latency, both axes logarithmic, so that the
//! tail reads at a glance. Plain SVG text, as the storm's chart.

use std::fmt::Write as _;

use crate::Measured;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 380.0;
const MARGIN: f64 = 70.0;
const COLOURS: [&str; 3] = ["#d62728", "#1f77b4", "#2ca02c"];
/// The latencies shown, in milliseconds: 0.5 ms to 1 s.
const X_RANGE: (f64, f64) = (0.5, 1000.0);
/// The shares shown: all calls down to one in 10,000.
const Y_RANGE: (f64, f64) = (1e-4, 1.0);

fn x(ms: f64) -> f64 {
    let (lo, hi) = X_RANGE;
    MARGIN + WIDTH * (ms.clamp(lo, hi).ln() - lo.ln()) / (hi.ln() - lo.ln())
}

fn y(share: f64) -> f64 {
    let (lo, hi) = Y_RANGE;
    MARGIN + HEIGHT * (1.0 - (share.clamp(lo, hi).ln() - lo.ln()) / (hi.ln() - lo.ln()))
}

/// The chart of `measured` as an SVG document.
pub fn svg(measured: &[Measured]) -> String {
    let (width, height) = (WIDTH + 2.0 * MARGIN + 160.0, HEIGHT + 2.0 * MARGIN);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="{width}" height="{height}" fill="white"/>"#
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="30" text-anchor="middle" font-size="14">Share of calls slower than a latency (log-log)</text>"#,
        MARGIN + WIDTH / 2.0
    );
    for ms in [1.0, 10.0, 100.0, 1000.0] {
        let at = x(ms);
        let _ = writeln!(
            out,
            r##"<line x1="{at}" y1="{MARGIN}" x2="{at}" y2="{}" stroke="#ddd"/><text x="{at}" y="{}" text-anchor="middle">{ms} ms</text>"##,
            MARGIN + HEIGHT,
            MARGIN + HEIGHT + 18.0
        );
    }
    for (share, label) in [
        (1.0, "100 %"),
        (0.1, "10 %"),
        (0.01, "1 %"),
        (0.001, "0.1 %"),
        (0.0001, "0.01 %"),
    ] {
        let at = y(share);
        let _ = writeln!(
            out,
            r##"<line x1="{MARGIN}" y1="{at}" x2="{}" y2="{at}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{label}</text>"##,
            MARGIN + WIDTH,
            MARGIN - 6.0,
            at + 4.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">latency</text>"#,
        MARGIN + WIDTH / 2.0,
        MARGIN + HEIGHT + 40.0
    );
    for (i, m) in measured.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let n = m.latencies.len() as f64;
        let mut points = String::new();
        let mut last = (f64::NAN, f64::NAN);
        for (k, latency) in m.latencies.iter().enumerate() {
            // Slower than this latency: the calls after it.
            let share = (n - k as f64 - 1.0) / n;
            if share < Y_RANGE.0 {
                break;
            }
            let at = (x(latency.as_secs_f64() * 1000.0), y(share));
            // A point per pixel moved is all the eye reads.
            if (at.0 - last.0).abs() < 1.0 && (at.1 - last.1).abs() < 1.0 {
                continue;
            }
            last = at;
            let _ = write!(points, "{:.1},{:.1} ", at.0, at.1);
        }
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>"#
        );
        let legend_y = MARGIN + 20.0 * i as f64;
        let legend_x = MARGIN + WIDTH + 20.0;
        let _ = writeln!(
            out,
            r#"<line x1="{legend_x}" y1="{legend_y}" x2="{}" y2="{legend_y}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            legend_x + 20.0,
            legend_x + 26.0,
            legend_y + 4.0,
            m.variant.name().replace('`', "")
        );
    }
    out.push_str("</svg>\n");
    out
}
