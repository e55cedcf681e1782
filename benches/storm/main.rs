//! The retry-storm simulator: how many calls, and how long, N clients
//! contending for one row take under each backoff strategy; the load a
//! failing backend sees with and without a retry budget; the load that
//! hedging adds to a backend that is down; and what an overloaded backend
//! receives with a budget and an adaptive throttle.
//!
//! ```text
//! cargo run --release -p benches --bin storm                    # the tables
//! cargo run --release -p benches --bin storm -- --svg storm.svg # and the chart
//! cargo run --release -p benches --bin storm -- --runs 10       # a quicker look
//! cargo run --release -p benches --bin storm -- --overload-svg overload.svg
//! ```
//!
//! The results are deterministic: the same arguments give the same tables.

mod chart;
mod hedging;
mod overload;
mod sim;

use std::process::ExitCode;

use sim::{Hold, Strategy, fleet_load, mean_cost, rejection_load};

struct Options {
    runs: u64,
    svg: Option<String>,
    overload_svg: Option<String>,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        runs: 100,
        svg: None,
        overload_svg: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => {
                let runs = args.next().ok_or("--runs needs a number")?;
                options.runs = match runs.parse() {
                    Ok(0) | Err(_) => {
                        return Err(format!("--runs needs a positive number, not `{runs}`"));
                    }
                    Ok(n) => n,
                };
            }
            "--svg" => options.svg = Some(args.next().ok_or("--svg needs a file name")?),
            "--overload-svg" => {
                options.overload_svg = Some(args.next().ok_or("--overload-svg needs a file name")?);
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}` (expected --runs N, --svg FILE or --overload-svg FILE)"
                ));
            }
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("storm: {message}");
            return ExitCode::FAILURE;
        }
    };

    let rows: Vec<chart::Row> = (10..=190)
        .step_by(10)
        .map(|clients| {
            let costs = Strategy::ALL
                .iter()
                .map(|&strategy| mean_cost(strategy, clients, options.runs, clients as u64))
                .collect();
            (clients, costs)
        })
        .collect();

    let header: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
    println!(
        "Mean over {} seeded runs per point; base 5 ms, cap 2 s, network |N(10 ms, 2 ms)| per hop.\n",
        options.runs
    );
    println!("### Calls (writes sent, the winning ones included)\n");
    table(&header, &rows, |cost| format!("{:.0}", cost.calls));
    println!("\n### Completion time (ms, until the last client has written)\n");
    table(&header, &rows, |cost| format!("{:.0}", cost.time_ms));

    println!("\n### A backend rejecting 95% of requests, `max = 3`\n");
    println!("| | load (attempts per request) |\n|---|---|");
    println!("| no budget | {:.2}× |", rejection_load(100_000, false, 1));
    println!(
        "| `RetryBudget` of 10% | {:.2}× |",
        rejection_load(100_000, true, 1)
    );

    println!("\n### A fleet of 50 instances and a backend rejecting 95%, `max = 3`\n");
    println!("| | load (attempts per request) |\n|---|---|");
    let loads: Vec<(Hold, f64)> = Hold::ALL
        .iter()
        .map(|hold| (*hold, fleet_load(50, 200, *hold, 1)))
        .collect();
    for (hold, load) in &loads {
        println!("| {} | {load:.3}× |", hold.name());
    }
    // The same as bars, 20 characters a request.
    println!("\n```text");
    for (hold, load) in &loads {
        let bar = "█".repeat((load * 20.0).round() as usize);
        println!("{:<36} {bar} {load:.2}", hold.name());
    }
    println!("```");

    println!(
        "\n### Hedging through a full outage, `max = 3`, `hedge = 20ms`, `attempt_timeout = 100ms`\n"
    );
    println!("| | load (attempts per request) |\n|---|---|");
    println!("| no budget | {:.2}× |", hedging::outage_load(1_000, false));
    println!(
        "| `RetryBudget` of 10% | {:.2}× |",
        hedging::outage_load(1_000, true)
    );

    println!(
        "\n### {} clients against a backend with capacity for a tenth of their demand, `max = 3`\n",
        overload::CLIENTS
    );
    println!(
        "| | received per accepted, in the overload | seconds after capacity returns to 90% of the demand accepted | to all of it |\n|---|---|---|---|"
    );
    let runs: Vec<(overload::Protection, overload::Run)> = overload::Protection::ALL
        .iter()
        .map(|&protection| (protection, overload::run(protection, 1)))
        .collect();
    for (protection, run) in &runs {
        let recovery = |share| {
            run.recovery(share)
                .map_or_else(|| "never".to_owned(), |s| s.to_string())
        };
        println!(
            "| {} | {:.2} | {} | {} |",
            protection.name(),
            run.received_per_accepted(),
            recovery(0.9),
            recovery(1.0)
        );
    }
    if let Some(path) = &options.overload_svg {
        if let Err(error) = std::fs::write(path, chart::overload_svg(&runs)) {
            eprintln!("storm: could not write {path}: {error}");
            return ExitCode::FAILURE;
        }
        eprintln!("storm: overload chart written to {path}");
    }

    if let Some(path) = options.svg {
        if let Err(error) = std::fs::write(&path, chart::svg(&rows)) {
            eprintln!("storm: could not write {path}: {error}");
            return ExitCode::FAILURE;
        }
        eprintln!("storm: chart written to {path}");
    }
    ExitCode::SUCCESS
}

fn table(header: &[&str], rows: &[chart::Row], cell: fn(&sim::Cost) -> String) {
    println!("| clients | {} |", header.join(" | "));
    println!("|---:|{}", "---:|".repeat(header.len()));
    for (clients, costs) in rows {
        let cells: Vec<String> = costs.iter().map(cell).collect();
        println!("| {clients} | {} |", cells.join(" | "));
    }
}
