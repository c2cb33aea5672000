//! Rounds of measurements against references in the same run: every target after a warm-up,
//! back to back in alternating order each round (so no target always runs on a warmer
//! machine), each round printed, then the medians, the median ratios to the reference with
//! their min and max, and each p99 as a multiple of the reference's.

use crate::load::{Generator, Measure};
use crate::measure::{median, spread};

/// What is measured: a label, a URL, and the one header it needs (`Host`, `Authorization`).
#[derive(Debug, Clone)]
pub struct Target<'a> {
    pub label: &'a str,
    pub url: String,
    pub header: Option<&'a str>,
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
    let mut table: Vec<Vec<Measure>> = vec![Vec::new(); targets.len()];
    for round in 0..plan.rounds {
        let mut order: Vec<usize> = (0..targets.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        let mut got = vec![
            Measure {
                rps: 0.0,
                p99_ms: 0.0
            };
            targets.len()
        ];
        for i in order {
            let t = &targets[i];
            got[i] = load.run(&t.url, plan.seconds, plan.connections, t.header);
        }
        let reference = got[..references].iter().map(|m| m.rps).fold(0.0, f64::max);
        let reference_p99 = got[..references]
            .iter()
            .map(|m| m.p99_ms)
            .fold(f64::INFINITY, f64::min);
        println!("round {round}:");
        for (i, t) in targets.iter().enumerate() {
            println!(
                "  {:<22} {:>10.0} req/s   p99 {:>7.2} ms   {:>5.2}x reference   p99 {:>5.2}x reference's",
                t.label,
                got[i].rps,
                got[i].p99_ms,
                got[i].rps / reference,
                got[i].p99_ms / reference_p99
            );
            table[i].push(got[i]);
        }
        for slot in 0..measured {
            ratios[slot].push(got[slot + references].rps / reference);
            p99_ratios[slot].push(got[slot + references].p99_ms / reference_p99);
        }
    }
    println!();
    println!(
        "{:<22} {:>12} {:>12}",
        "target", "median req/s", "median p99"
    );
    for (i, t) in targets.iter().enumerate() {
        println!(
            "{:<22} {:>12.0} {:>9.2} ms",
            t.label,
            median(table[i].iter().map(|m| m.rps).collect()),
            median(table[i].iter().map(|m| m.p99_ms).collect())
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
