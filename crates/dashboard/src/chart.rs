//! The page detail's views chart: one bar per day, drawn as inline SVG on the server, so it
//! needs no script and no image request (the dashboard's CSP allows neither from elsewhere).
//! It scales to the width of a phone; each bar names its day and count for screen readers
//! and on hover.

use std::fmt::Write as _;

use time::Date;

const WIDTH: u64 = 600;
const BARS_HEIGHT: u64 = 100;
const LABELS_HEIGHT: u64 = 20;

/// The SVG of `days` (oldest first, one entry per day).
pub(super) fn views_chart(days: &[(Date, u64)]) -> String {
    let total: u64 = days.iter().map(|(_, n)| n).sum();
    let most = days.iter().map(|(_, n)| *n).max().unwrap_or(0).max(1);
    let count = u64::try_from(days.len()).unwrap_or(1).max(1);
    let slot = WIDTH / count;
    let bar = slot.saturating_sub(2).max(1);
    let mut svg = format!(
        "<svg id=\"views-chart\" viewBox=\"0 0 {WIDTH} {}\" width=\"100%\" role=\"img\" \
         aria-label=\"Views per day over the last {count} days: {total} in all\" \
         data-total=\"{total}\">",
        BARS_HEIGHT + LABELS_HEIGHT
    );
    for (i, (day, n)) in (0u64..).zip(days) {
        let height = n * BARS_HEIGHT / most;
        let _ = write!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"{bar}\" height=\"{height}\" fill=\"#2f6fdf\" \
             data-day=\"{day}\" data-views=\"{n}\"><title>{day}: {n} view{}</title></rect>",
            i * slot + 1,
            BARS_HEIGHT - height,
            if *n == 1 { "" } else { "s" },
        );
    }
    let baseline = BARS_HEIGHT + 1;
    let _ = write!(
        svg,
        "<line x1=\"0\" y1=\"{baseline}\" x2=\"{WIDTH}\" y2=\"{baseline}\" stroke=\"#888\"/>"
    );
    if let (Some((first, _)), Some((last, _))) = (days.first(), days.last()) {
        let y = BARS_HEIGHT + LABELS_HEIGHT - 4;
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{y}\" font-size=\"12\" fill=\"#555\">{first}</text>\
             <text x=\"{WIDTH}\" y=\"{y}\" font-size=\"12\" fill=\"#555\" text-anchor=\"end\">{last}</text>"
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    fn bars(svg: &str) -> Vec<(String, u64, u64)> {
        svg.split("<rect ")
            .skip(1)
            .map(|r| {
                let attr = |name: &str| {
                    let start = r.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                    r[start..start + r[start..].find('"').unwrap()].to_owned()
                };
                (
                    attr("data-day"),
                    attr("data-views").parse().unwrap(),
                    attr("height").parse().unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn one_bar_a_day_scaled_to_the_busiest() {
        let start = date!(2026 - 10 - 25);
        let days: Vec<(Date, u64)> = (0..30)
            .map(|i| {
                (
                    start + time::Duration::days(i),
                    [0, 3, 12][(i % 3) as usize],
                )
            })
            .collect();
        let svg = views_chart(&days);
        let drawn = bars(&svg);
        assert_eq!(drawn.len(), 30);
        assert_eq!(drawn[0], ("2026-10-25".into(), 0, 0));
        assert_eq!(drawn[1], ("2026-10-26".into(), 3, 25));
        assert_eq!(drawn[2], ("2026-10-27".into(), 12, BARS_HEIGHT));
        assert!(svg.contains("data-total=\"150\""), "{svg}");
        assert!(svg.contains(">2026-10-25</text>") && svg.contains(">2026-11-23</text>"));
        assert!(svg.contains("<title>2026-10-26: 3 views</title>"));
    }

    #[test]
    fn a_quiet_month_draws_flat_bars() {
        let days = [(date!(2026 - 11 - 23), 0), (date!(2026 - 11 - 24), 1)];
        let drawn = bars(&views_chart(&days));
        assert_eq!(drawn[0].2, 0);
        assert_eq!(drawn[1].2, BARS_HEIGHT);
        assert!(views_chart(&[]).ends_with("</svg>"));
    }
}
