//! Checking an [`OfferQuery`] before it runs: every bad field is reported, by name, with
//! what would be valid.

use std::fmt;

use glob::Pattern;

use super::{GpuCount, OfferQuery, QueryError};

/// One invalid field of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field, with an index for list elements: `regions[1]`.
    pub field: String,
    /// The value given, as written.
    pub value: String,
    /// What is wrong and what would be valid.
    pub problem: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` = {}: {}", self.field, self.value, self.problem)
    }
}

/// Compiles glob list `field`, one error per bad pattern.
pub(super) fn compile_globs(
    field: &'static str,
    globs: &[String],
) -> Result<Vec<Pattern>, Vec<FieldError>> {
    let mut out = Vec::with_capacity(globs.len());
    let mut errors = Vec::new();
    for (i, g) in globs.iter().enumerate() {
        let error = |problem: String| FieldError {
            field: format!("{field}[{i}]"),
            value: format!("{g:?}"),
            problem,
        };
        if g.trim().is_empty() {
            errors.push(error(
                "an empty pattern matches nothing; use \"*\" for any, or leave the list empty"
                    .to_string(),
            ));
            continue;
        }
        match Pattern::new(g) {
            Ok(p) => out.push(p),
            Err(e) => errors.push(error(format!(
                "invalid glob ({}); valid globs use `*`, `?` and `[abc]`, e.g. \"us-*\"",
                e.msg
            ))),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Checks every field of `q`; the error lists all invalid fields.
pub fn validate(q: &OfferQuery) -> Result<(), QueryError> {
    let mut errors = Vec::new();
    let mut check = |field: &str, value: f64, ok: bool, valid: &str| {
        if !ok || !value.is_finite() {
            errors.push(FieldError {
                field: field.to_string(),
                value: value.to_string(),
                problem: format!("must be {valid}"),
            });
        }
    };
    match q.gpu_count {
        Some(GpuCount::Exact(n)) | Some(GpuCount::AtLeast(n)) => check(
            "gpu_count",
            n,
            n > 0.0,
            "a number above 0 (e.g. 1, 8, or 0.5 for half a GPU)",
        ),
        None => {}
    }
    if let Some(v) = q.min_vram_gib {
        check("min_vram_gib", v, v >= 0.0, "0 or more GiB");
    }
    if let Some(v) = q.max_price_per_gpu_hour {
        check(
            "max_price_per_gpu_hour",
            v,
            v > 0.0,
            "a price above 0 USD per GPU-hour (e.g. 2.5)",
        );
    }
    if let Some(v) = q.min_vcpus {
        check("min_vcpus", v, v >= 0.0, "0 or more");
    }
    if let Some(v) = q.min_memory_gib {
        check("min_memory_gib", v, v >= 0.0, "0 or more GiB");
    }
    if let Some(v) = q.prefer_available {
        check(
            "min_availability",
            v,
            (0.0..=1.0).contains(&v),
            "from 0 to 1 (e.g. 0.5)",
        );
    }
    check(
        "min_saving_percent",
        q.min_saving_percent,
        (0.0..100.0).contains(&q.min_saving_percent),
        "a percentage from 0 up to (not including) 100",
    );
    if q.limit == Some(0) {
        errors.push(FieldError {
            field: "limit".to_string(),
            value: "0".to_string(),
            problem: "must be at least 1, or unset for no limit".to_string(),
        });
    }
    for (field, globs) in [
        ("regions", &q.regions),
        ("zones", &q.zones),
        ("exclude_instance_types", &q.exclude_instance_types),
    ] {
        if let Err(e) = compile_globs(field, globs) {
            errors.extend(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(QueryError::Invalid(errors))
    }
}
