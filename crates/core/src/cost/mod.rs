//! Cost of a node pool: hourly and monthly at its floor and ceiling (summed as [`lines`] of
//! offer, count and capacity, the one pricing function), the change against a prior
//! preview, a one-line summary, and a budget check.

mod budget;
pub mod lines;
mod money;
mod preview;

pub use budget::{BudgetError, check_budget};
pub use lines::{HOURS_PER_MONTH, PriceLine, PricedAs, Totals, total};
pub use money::{format_delta, format_usd};
pub use preview::{CostError, CostPreview, PriorCost, preview, priced_as};

#[cfg(test)]
mod tests;
