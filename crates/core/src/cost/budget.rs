//! Checking a pool's cost against the provider's budget.

use super::money::format_usd;
use super::preview::CostPreview;

/// A pool whose ceiling costs more than the budget allows.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "pool `{pool}` can cost up to {}/month at max_nodes = {max_nodes} ({}/month at min_nodes), over \
     budget.max_monthly_usd = {} by {}; lower max_nodes or raise the budget",
    format_usd(*.monthly_usd_max), format_usd(*.monthly_usd), format_usd(*.budget_usd), format_usd(.monthly_usd_max - .budget_usd)
)]
pub struct BudgetError {
    /// The pool.
    pub pool: String,
    /// Its most nodes.
    pub max_nodes: u32,
    /// USD per month at `max_nodes`.
    pub monthly_usd_max: f64,
    /// USD per month at `min_nodes`.
    pub monthly_usd: f64,
    /// The budget, USD per month.
    pub budget_usd: f64,
}

/// Fails when the pool at `max_nodes` would cost more per month than `max_monthly_usd`.
pub fn check_budget(p: &CostPreview, max_monthly_usd: f64) -> Result<(), BudgetError> {
    if p.monthly_usd_max <= max_monthly_usd {
        return Ok(());
    }
    let n = &p.nodes;
    Err(BudgetError {
        pool: p.pool.clone(),
        max_nodes: n.on_demand_max + n.spot_max,
        monthly_usd_max: p.monthly_usd_max,
        monthly_usd: p.monthly_usd,
        budget_usd: max_monthly_usd,
    })
}
