//! What the CLI's SVG charts share: round axis steps, short money labels, and (in tests)
//! the boxes their text occupies, to check that no label covers another.

/// A round step for about `ticks` ticks up to `max`: 1, 2 or 5 times a power of ten.
pub fn nice_step(max: f64, ticks: f64) -> f64 {
    let raw = (max / ticks).max(f64::MIN_POSITIVE);
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power);
    step.max(1.0)
}

/// Money for an axis tick: `$0`, `$500`, `$12k`, `$1.5M`.
pub fn short_usd(x: f64) -> String {
    let trim = |v: f64| {
        let t = format!("{v:.1}");
        t.strip_suffix(".0").map(str::to_string).unwrap_or(t)
    };
    match x.abs() {
        a if a >= 1e6 => format!("${}M", trim(x / 1e6)),
        a if a >= 1e3 => format!("${}k", trim(x / 1e3)),
        _ => format!("${}", trim(x)),
    }
}

/// Escapes text for SVG.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Each horizontal `<text>` of `chart`: (left, right, baseline, text) in pixels, at 7.2 px
/// a character (12 px sans-serif), by its anchor.
#[cfg(test)]
pub fn text_boxes(chart: &str) -> Vec<(f64, f64, f64, String)> {
    let attr = |tag: &str, name: &str| {
        let key = format!(" {name}=\"");
        tag.split(&key)
            .nth(1)?
            .split('"')
            .next()?
            .parse::<f64>()
            .ok()
    };
    chart
        .split("<text")
        .skip(1)
        .filter(|t| !t.contains("rotate("))
        .map(|t| {
            let (tag, rest) = t.split_once('>').unwrap();
            let label = rest.split("</text>").next().unwrap().to_string();
            let width = label.chars().count() as f64 * 7.2;
            let x = attr(tag, "x").unwrap();
            let left = match () {
                _ if tag.contains("text-anchor=\"middle\"") => x - width / 2.0,
                _ if tag.contains("text-anchor=\"end\"") => x - width,
                _ => x,
            };
            (left, left + width, attr(tag, "y").unwrap(), label)
        })
        .collect()
}

/// Asserts that no two text boxes of `chart` on the same line overlap and that all stay
/// within `width`.
#[cfg(test)]
pub fn assert_no_overlap(chart: &str, width: f64) {
    let boxes = text_boxes(chart);
    for (i, a) in boxes.iter().enumerate() {
        assert!(a.0 >= 0.0 && a.1 <= width, "{a:?} leaves the chart");
        for b in &boxes[i + 1..] {
            let same_line = (a.2 - b.2).abs() < 12.0;
            let apart = a.1 <= b.0 || b.1 <= a.0;
            assert!(!same_line || apart, "{a:?} overlaps {b:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_round_and_money_is_short() {
        assert_eq!(nice_step(100.0, 5.0), 20.0);
        assert_eq!(nice_step(7.0, 8.0), 1.0);
        assert_eq!(short_usd(1_500_000.0), "$1.5M");
        assert_eq!(short_usd(12_000.0), "$12k");
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
