//! Rounds of measurements against references in the same run: every target after a warm-up,
//! back to back in alternating order each round (so no target always runs on a warmer
//! machine), each round printed, then the medians, the median ratios to the reference with
//! their min and max, and each p99 as a multiple of the reference's. With each rate goes
//! the CPU time spent per request by the processes that served it and by the whole machine
//! (the load generator and the kernel included), from `/proc`: a server that answers fewer
//! requests than the reference while spending less per request is losing the shared cores,
//! not doing more work.

use crate::load::{Generator, Measure};
use crate::measure::{cpu_ticks, machine_ticks, median, micros_per_request, spread};

/// What is measured: a label, a URL, the one header it needs (`Host`, `Authorization`), and
/// the processes that serve it.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    pub label: &'a str,
    pub url: String,
    pub header: Option<&'a str>,
    pub server: Vec<u32>,
}

/// One run of a target: its rates, and the CPU microseconds per request of its server and
/// of the machine.
#[derive(Debug, Clone, Copy)]
struct Run {
    measure: Measure,
    server_us: f64,
    machine_us: f64,
}

fn run(load: &Generator, target: &Target<'_>, plan: Plan) -> Run {
    let server = || target.server.iter().map(|&p| cpu_ticks(p)).sum::<u64>();
    let (server_before, machine_before) = (server(), machine_ticks().0);
    let measure = load.run(&target.url, plan.seconds, plan.connections, target.header);
    let (server_after, machine_after) = (server(), machine_ticks().0);
    let requests = measure.rps * plan.seconds as f64;
    let per_request = |ticks: u64| micros_per_request(ticks, requests);
    Run {
        measure,
        server_us: per_request(server_after.saturating_sub(server_before)),
        machine_us: per_request(machine_after.saturating_sub(machine_before)),
    }
}

/// How long and how hard.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub rounds: usize,
    pub seconds: u64,
    pub connections: usize,
}

/// Measures `targets` for `plan`: the first `references` of them are the references (the
/// best of their rates, the lowest of their p99s), and `ratio_names` names the others'
/// ratios, in order. Prints everything it measured.
pub fn compare(
    load: &Generator,
    targets: &[Target<'_>],
    references: usize,
    ratio_names: &[&str],
    plan: Plan,
) {
    for t in targets {
        let _warm_up = load.run(&t.url, 2, plan.connections, t.header);
    }
    let measured = targets.len() - references;
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); measured];
    let mut p99_ratios: Vec<Vec<f64>> = vec![Vec::new(); measured];
    let mut table: Vec<Vec<Run>> = vec![Vec::new(); targets.len()];
    for round in 0..plan.rounds {
        let mut order: Vec<usize> = (0..targets.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        let mut runs = vec![None; targets.len()];
        for i in order {
            runs[i] = Some(run(load, &targets[i], plan));
        }
        let runs: Vec<Run> = runs.into_iter().flatten().collect();
        let got: Vec<Measure> = runs.iter().map(|r| r.measure).collect();
        let reference = got[..references].iter().map(|m| m.rps).fold(0.0, f64::max);
        let reference_p99 = got[..references]
            .iter()
            .map(|m| m.p99_ms)
            .fold(f64::INFINITY, f64::min);
        println!("round {round}:");
        for (i, t) in targets.iter().enumerate() {
            println!(
                "  {:<22} {:>10.0} req/s   p99 {:>7.2} ms   {:>5.2}x reference   p99 {:>5.2}x reference's   CPU per request: server {:>5.1} us, machine {:>5.1} us",
                t.label,
                got[i].rps,
                got[i].p99_ms,
                got[i].rps / reference,
                got[i].p99_ms / reference_p99,
                runs[i].server_us,
                runs[i].machine_us,
            );
            table[i].push(runs[i]);
        }
        for slot in 0..measured {
            ratios[slot].push(got[slot + references].rps / reference);
            p99_ratios[slot].push(got[slot + references].p99_ms / reference_p99);
        }
    }
    println!();
    println!(
        "{:<22} {:>12} {:>12} {:>16} {:>17}",
        "target", "median req/s", "median p99", "server us/req", "machine us/req"
    );
    for (i, t) in targets.iter().enumerate() {
        let of = |f: fn(&Run) -> f64| median(table[i].iter().map(f).collect());
        println!(
            "{:<22} {:>12.0} {:>9.2} ms {:>16.1} {:>17.1}",
            t.label,
            of(|r| r.measure.rps),
            of(|r| r.measure.p99_ms),
            of(|r| r.server_us),
            of(|r| r.machine_us),
        );
    }
    println!();
    for (slot, name) in ratio_names.iter().enumerate() {
        let (min, max) = spread(&ratios[slot]);
        println!(
            "ratio {name:<20} median {:.2} (min {min:.2}, max {max:.2})",
            median(ratios[slot].clone())
        );
    }
    for (slot, name) in ratio_names.iter().enumerate() {
        let (min, max) = spread(&p99_ratios[slot]);
        println!(
            "p99 {name:<22} median {:.2} (min {min:.2}, max {max:.2}) of the reference's p99",
            median(p99_ratios[slot].clone())
        );
    }
}
