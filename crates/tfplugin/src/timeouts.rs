//! The `timeouts` block: a single nested block with `create`, `update` and `delete`
//! durations written the way Go and Terraform write them (`45m`, `1h30m`, `90s`), read
//! into [`std::time::Duration`] with errors on `timeouts.<operation>`.

use crate::diag::{AttributePath, Diagnostics};
use crate::schema::{Attribute, Block, NestedBlock};
use crate::value::{Type, Value};
use std::time::Duration;

/// The block's name in the resource schema.
pub const BLOCK: &str = "timeouts";

/// The operations the block has an attribute for.
pub const OPERATIONS: [&str; 3] = ["create", "update", "delete"];

/// Why a duration does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// A unit other than `h`, `m` or `s`.
    #[error("unknown unit {0:?} (use h, m or s)")]
    UnknownUnit(char),
    /// A unit with no number before it.
    #[error("a number must come before {0:?}")]
    MissingNumber(char),
    /// Digits at the end with no unit.
    #[error("{0:?} has no unit")]
    MissingUnit(String),
    /// More seconds than fit in a `u64`.
    #[error("too long")]
    TooLong,
    /// Empty, or zero in total.
    #[error("it must be longer than zero")]
    NotPositive,
}

/// Parses `<whole number><unit>` parts, units `h`, `m`, `s` (Go's syntax for the units
/// timeouts use): `45m`, `1h30m`, `90s`. At least one part, total above zero.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let mut total = 0u64;
    let mut digits = String::new();
    let mut parts = 0;
    for c in s.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            other => return Err(DurationError::UnknownUnit(other)),
        };
        let n: u64 = digits.parse().map_err(|_| match digits.is_empty() {
            true => DurationError::MissingNumber(c),
            false => DurationError::TooLong,
        })?;
        total = n
            .checked_mul(unit)
            .and_then(|x| total.checked_add(x))
            .ok_or(DurationError::TooLong)?;
        digits.clear();
        parts += 1;
    }
    if !digits.is_empty() {
        return Err(DurationError::MissingUnit(digits));
    }
    if parts == 0 || total == 0 {
        return Err(DurationError::NotPositive);
    }
    Ok(Duration::from_secs(total))
}

/// The `timeouts` block schema; each argument is the default shown in that operation's
/// description (e.g. `"45m"`).
pub fn block(create: &str, update: &str, delete: &str) -> NestedBlock {
    let attr = |op: &str, default: &str| {
        Attribute::optional(op, Type::String).describe(format!(
            "How long a {op} may take, as a duration like `45m`, `1h30m` or `90s` (default `{default}`)."
        ))
    };
    NestedBlock::single(
        BLOCK,
        Block::new("How long each operation may take before it fails.")
            .attribute(attr("create", create))
            .attribute(attr("update", update))
            .attribute(attr("delete", delete)),
    )
}

/// The duration `timeouts.<operation>` of `config` (a resource's configuration or
/// state); `None` when the block or attribute is unset or unknown, or when it does not
/// parse (then an error on `timeouts.<operation>` is added to `diags`).
pub fn operation(config: &Value, operation: &str, diags: &mut Diagnostics) -> Option<Duration> {
    let s = config
        .get_attr(BLOCK)
        .and_then(|b| b.get_attr(operation))
        .and_then(Value::as_str)?;
    match parse_duration(s) {
        Ok(d) => Some(d),
        Err(why) => {
            diags.attr_error(
                AttributePath::attr(BLOCK).then_attr(operation),
                format!("Invalid {BLOCK}.{operation}"),
                format!(
                    "`{BLOCK}.{operation}` is {s:?}: {why}; write a duration such as \"45m\", \"1h30m\" or \"90s\"."
                ),
            );
            None
        }
    }
}

/// The three timeouts of a configuration, each `None` when not set (use your default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timeouts {
    /// `timeouts.create`.
    pub create: Option<Duration>,
    /// `timeouts.update`.
    pub update: Option<Duration>,
    /// `timeouts.delete`.
    pub delete: Option<Duration>,
}

impl Timeouts {
    /// Reads the block of `config`; every unparsable value is an error in `diags`.
    pub fn read(config: &Value, diags: &mut Diagnostics) -> Timeouts {
        Timeouts {
            create: operation(config, "create", diags),
            update: operation(config, "update", diags),
            delete: operation(config, "delete", diags),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Nesting;

    #[test]
    fn parses_units_and_rejects_garbage() {
        assert_eq!(parse_duration("45m"), Ok(Duration::from_secs(2700)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration(" 2h "), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("5d"), Err(DurationError::UnknownUnit('d')));
        assert_eq!(parse_duration("m"), Err(DurationError::MissingNumber('m')));
        assert_eq!(
            parse_duration("10"),
            Err(DurationError::MissingUnit("10".into()))
        );
        assert_eq!(parse_duration("0s"), Err(DurationError::NotPositive));
        assert_eq!(parse_duration(""), Err(DurationError::NotPositive));
        assert_eq!(
            parse_duration("99999999999999999999h"),
            Err(DurationError::TooLong)
        );
        for bad in ["1.5h", "-1m"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_the_block_and_names_the_bad_attribute() {
        let config = Value::object([(
            "timeouts",
            Value::object([
                ("create", Value::string("1h")),
                ("update", Value::string("soon")),
                ("delete", Value::unknown()),
            ]),
        )]);
        let mut d = Diagnostics::new();
        let t = Timeouts::read(&config, &mut d);
        assert_eq!(t.create, Some(Duration::from_secs(3600)));
        assert_eq!((t.update, t.delete), (None, None));
        assert_eq!(d.0.len(), 1);
        assert_eq!(d.0[0].summary, "Invalid timeouts.update");
        assert_eq!(
            d.0[0].attribute,
            Some(AttributePath::attr("timeouts").then_attr("update"))
        );
        assert_eq!(
            d.0[0].detail,
            "`timeouts.update` is \"soon\": a number must come before 's'; write a duration such as \"45m\", \"1h30m\" or \"90s\"."
        );
        let mut d = Diagnostics::new();
        assert_eq!(
            Timeouts::read(&Value::object([("timeouts", Value::Null)]), &mut d),
            Timeouts::default()
        );
        assert!(d.is_empty());
    }

    #[test]
    fn block_is_single_with_three_optional_strings() {
        let b = block("45m", "45m", "30m");
        assert_eq!(b.type_name, "timeouts");
        assert_eq!(b.nesting, Nesting::Single);
        let names: Vec<_> = b.block.attributes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, OPERATIONS);
        assert!(b.block.attributes.iter().all(|a| a.is_optional()));
        assert!(b.block.attributes[2].description.contains("default `30m`"));
    }
}
