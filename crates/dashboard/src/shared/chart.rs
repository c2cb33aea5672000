//! The page detail's views chart: one bar per day, drawn as inline SVG on the server, so it
//! needs no script and no image request (the dashboard's CSP allows neither from elsewhere).
//! It scales to the width of a phone, has an axis with numbers and a caption with the total;
//! each bar names its day and count on hover, and a visually hidden table gives screen
//! readers every day's count.

use std::fmt::Write as _;

use time::Date;

const WIDTH: u64 = 600;
/// Room on the left for the axis' numbers.
const AXIS: u64 = 36;
/// Room above the bars for the top number.
const TOP: u64 = 8;
const BARS_HEIGHT: u64 = 100;
const LABELS_HEIGHT: u64 = 20;

/// The chart of `days` (oldest first, one entry per day): the SVG with its axis, a caption
/// with the total, and the same numbers as a table for screen readers (visually hidden).
pub(crate) fn views_chart(days: &[(Date, u64)]) -> String {
    let total: u64 = days.iter().map(|(_, n)| n).sum();
    let most = days.iter().map(|(_, n)| *n).max().unwrap_or(0).max(1);
    let count = u64::try_from(days.len()).unwrap_or(1).max(1);
    let slot = (WIDTH - AXIS) / count;
    let bar = slot.saturating_sub(2).max(1);
    let baseline = TOP + BARS_HEIGHT;
    let mut svg = format!(
        "<svg id=\"views-chart\" viewBox=\"0 0 {WIDTH} {}\" width=\"100%\" role=\"img\" \
         aria-label=\"Views per day over the last {count} days: {total} in all, at most {most} \
         a day\" data-total=\"{total}\">",
        baseline + LABELS_HEIGHT
    );
    // The axis: a grid line and its number at the busiest day's height, and half of it.
    let mut marks = vec![(most, TOP)];
    if most >= 2 {
        marks.push((most / 2, baseline - (most / 2) * BARS_HEIGHT / most));
    }
    marks.push((0, baseline));
    for (value, y) in marks {
        let _ = write!(
            svg,
            "<line class=\"grid\" x1=\"{AXIS}\" y1=\"{y}\" x2=\"{WIDTH}\" y2=\"{y}\"/>\
             <text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{value}</text>",
            AXIS - 6,
            y + 4,
        );
    }
    for (i, (day, n)) in (0u64..).zip(days) {
        let height = n * BARS_HEIGHT / most;
        let _ = write!(
            svg,
            "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{bar}\" height=\"{height}\" \
             data-day=\"{day}\" data-views=\"{n}\"><title>{day}: {n} view{}</title></rect>",
            AXIS + i * slot + 1,
            baseline - height,
            if *n == 1 { "" } else { "s" },
        );
    }
    if let (Some((first, _)), Some((last, _))) = (days.first(), days.last()) {
        let y = baseline + LABELS_HEIGHT - 4;
        let _ = write!(
            svg,
            "<text class=\"axis\" x=\"{AXIS}\" y=\"{y}\">{first}</text>\
             <text class=\"axis\" x=\"{WIDTH}\" y=\"{y}\" text-anchor=\"end\">{last}</text>"
        );
    }
    svg.push_str("</svg>");
    let _ = write!(
        svg,
        "<figcaption id=\"views-total\"><strong>{total}</strong> view{} in {count} days; the \
         busiest day had {}.</figcaption>",
        if total == 1 { "" } else { "s" },
        days.iter().map(|(_, n)| *n).max().unwrap_or(0),
    );
    svg.push_str(
        "<table class=\"visually-hidden\" id=\"views-table\"><caption>Views per day</caption>\
         <thead><tr><th scope=\"col\">Day</th><th scope=\"col\">Views</th></tr></thead><tbody>",
    );
    for (day, n) in days {
        let _ = write!(svg, "<tr><td>{day}</td><td>{n}</td></tr>");
    }
    svg.push_str("</tbody></table>");
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
        // The axis names the busiest day's count and half of it; the text equivalent lists
        // every day.
        assert!(svg.contains("text-anchor=\"end\">12</text>") && svg.contains(">6</text>"));
        assert!(
            svg.contains("<strong>150</strong> views in 30 days"),
            "{svg}"
        );
        assert!(svg.contains("<tr><td>2026-10-27</td><td>12</td></tr>"));
        assert_eq!(svg.matches("<tr><td>").count(), 30);
    }

    #[test]
    fn a_quiet_month_draws_flat_bars() {
        let days = [(date!(2026 - 11 - 23), 0), (date!(2026 - 11 - 24), 1)];
        let drawn = bars(&views_chart(&days));
        assert_eq!(drawn[0].2, 0);
        assert_eq!(drawn[1].2, BARS_HEIGHT);
        assert!(views_chart(&[]).contains("</svg>"));
    }
}
