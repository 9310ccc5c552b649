//! What the offer data sources share about availability: the inputs `prefer_available`
//! and `min_availability`, the outputs `availability`, `availability_source` and
//! `availability_as_of`, and the warnings that say when the ranking is by price alone.

use crate::checks;
use gpu_core::availability::{Availability, DEFAULT_MIN_AVAILABILITY, Scores};
use serde::Deserialize;
use tfplugin::schema::Attribute;
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Tf, Type, Value};

/// The two inputs.
pub fn input_attributes() -> Vec<Attribute> {
    vec![
        Attribute::optional("prefer_available", Type::Bool).describe("With `live = true`: rank places whose availability is at least `min_availability` first, then places without a score, then places below it; by price within each. Availability is each cloud's spot signal (AWS spot placement score, Azure spot placement score) for spot offers, else the provider's own record of recent answers (`events_file`, the last 7 days). Without any score the ranking is by price, with a warning. Default false: by price."),
        Attribute::optional("min_availability", Type::Number).describe("With `prefer_available`: the availability, from 0 to 1, a place needs to rank first. Default 0.5.").validate(checks::fraction()),
    ]
}

/// The three outputs of one offer: (name, type, description).
pub fn output_fields() -> [(&'static str, Type, &'static str); 3] {
    [
        (
            "availability",
            Type::Number,
            "How likely the place is to give the capacity now, from 0 to 1 (AWS score / 10; Azure High 0.9, Medium 0.5, Low 0.1, no quota 0; the record's share of ready answers); null without a score or without `live = true`.",
        ),
        (
            "availability_source",
            Type::String,
            "Where `availability` comes from (`aws spot placement score 7 of 10 …`, `azure spot placement score High`, `record: 3 of 4 answers ready in 7 days`); null without a score.",
        ),
        (
            "availability_as_of",
            Type::String,
            "The date of `availability` (`YYYY-MM-DD`, UTC); null without a score.",
        ),
    ]
}

/// The three outputs as values.
pub fn output_values(a: Option<&Availability>) -> [(&'static str, Value); 3] {
    [
        (
            "availability",
            a.map_or(Value::Null, |a| Value::number(a.score)),
        ),
        (
            "availability_source",
            a.map_or(Value::Null, |a| Value::string(a.source.clone())),
        ),
        (
            "availability_as_of",
            a.map_or(Value::Null, |a| Value::string(a.as_of.clone())),
        ),
    ]
}

/// The inputs as typed values.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Args {
    prefer_available: Tf<bool>,
    min_availability: Tf<f64>,
    live: Tf<bool>,
}

/// The availability a place needs to rank first, when `prefer_available` is on.
pub fn threshold(config: &Value) -> Option<f64> {
    let a: Args = tfplugin::tf::decode(config).unwrap_or_default();
    (a.prefer_available.known() == Some(&true)).then(|| {
        a.min_availability
            .known()
            .copied()
            .unwrap_or(DEFAULT_MIN_AVAILABILITY)
    })
}

/// The warnings about availability for an answer with `scores` (`None`: not read).
pub fn warnings(config: &Value, scores: Option<&Scores>) -> Diagnostics {
    let a: Args = tfplugin::tf::decode(config).unwrap_or_default();
    let mut d = Diagnostics::new();
    let prefer = a.prefer_available.known() == Some(&true);
    if !prefer && !a.min_availability.is_null() {
        d.push(
            Diagnostic::warning(
                "min_availability has no effect",
                "`min_availability` applies with `prefer_available = true`; offers rank by price.",
            )
            .at(AttributePath::attr("min_availability")),
        );
    }
    if !prefer {
        return d;
    }
    let why = match scores {
        _ if a.live.known() != Some(&true) => Some(
            "`prefer_available` reads availability with `live = true`; without it, offers rank by price alone.",
        ),
        None => Some("No availability was read; offers rank by price alone."),
        Some(s) if s.is_empty() => Some(
            "No cloud or record scored any of these places (see the other warnings); offers rank by price alone.",
        ),
        Some(_) => None,
    };
    if let Some(why) = why {
        d.push(
            Diagnostic::warning("Ranked by price alone", why)
                .at(AttributePath::attr("prefer_available")),
        );
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(prefer: Option<bool>, min: Option<f64>, live: bool) -> Value {
        Value::object([
            ("prefer_available", prefer.map_or(Value::Null, Value::Bool)),
            ("min_availability", min.map_or(Value::Null, Value::number)),
            ("live", Value::Bool(live)),
        ])
    }

    fn summaries(d: &Diagnostics) -> Vec<String> {
        d.0.iter().map(|d| d.summary.clone()).collect()
    }

    #[test]
    fn the_threshold_is_set_only_with_prefer_available() {
        assert_eq!(threshold(&config(Some(true), None, true)), Some(0.5));
        assert_eq!(threshold(&config(Some(true), Some(0.8), true)), Some(0.8));
        assert_eq!(threshold(&config(Some(false), Some(0.8), true)), None);
        assert_eq!(threshold(&config(None, None, true)), None);
    }

    #[test]
    fn a_ranking_by_price_alone_is_said() {
        let mut scored = Scores::new();
        scored.add_record(
            [(
                ("gcp".into(), "us-central1".into(), "H100".into()),
                Availability {
                    score: 1.0,
                    source: "record".into(),
                    as_of: "2026-12-06".into(),
                },
            )]
            .into(),
        );
        let on = config(Some(true), None, true);
        assert!(warnings(&on, Some(&scored)).0.is_empty());
        assert_eq!(
            summaries(&warnings(&on, Some(&Scores::new()))),
            ["Ranked by price alone"]
        );
        let offline = warnings(&config(Some(true), None, false), None);
        assert!(offline.0[0].detail.contains("`live = true`"), "{offline:?}");
        let unused = warnings(&config(None, Some(0.7), true), None);
        assert_eq!(summaries(&unused), ["min_availability has no effect"]);
        assert!(warnings(&config(None, None, true), None).0.is_empty());
    }
}
