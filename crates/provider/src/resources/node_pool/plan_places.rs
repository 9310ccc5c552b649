//! The parts of a `gpu_node_pool` plan that are about places: pricing each `failover`
//! place, the values known only once an apply has placed the pool, and the warnings that
//! say where a pool may land, where it runs and why.

use gpu_core::catalog::Catalog;
use gpu_core::cost::{self, CostPreview, PriorCost, format_usd};
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Value};

use super::desired::{self, Desired, Settings};
use super::places::{self, Place};
use super::plan::{TIME_TO_READY, pins_instance_types, set, with_stand_ins};
use super::schema::COST_ATTRIBUTES;
use super::{cloud_blocks, model};
use crate::resources::placing;

/// A failover place and the pool priced there.
pub struct Priced {
    /// The place.
    pub place: Place,
    /// The pool's cost there.
    pub preview: CostPreview,
}

/// Prices the pool at each `failover` place (and at `current`, the failover place it runs
/// on now, when its block is gone), each problem an error that names the place's block.
pub fn price_places(
    proposed: &Value,
    config: &Value,
    current: Option<&Place>,
    prior_cost: Option<PriorCost>,
    settings: &Settings,
    catalog: &Catalog,
    diags: &mut Diagnostics,
) -> Vec<Priced> {
    let pinned = pins_instance_types(config);
    let mut cfg_view = proposed.clone();
    if !pinned {
        set(&mut cfg_view, "instance_types", Value::Null);
    }
    let mut places: Vec<(Option<usize>, Place)> = places::failovers(proposed)
        .into_iter()
        .map(|(i, p)| (Some(i), p))
        .collect();
    if let Some(c) = current
        && !places.iter().any(|(_, p)| p.same(c))
    {
        places.push((None, c.clone()));
    }
    let mut out = Vec::new();
    for (i, place) in places {
        let (path, name) = match i {
            Some(i) => (
                AttributePath::attr("failover").then_index(i as i64),
                format!("failover[{i}] ({})", place.label()),
            ),
            None => (
                AttributePath::attr("failover"),
                format!("the place it runs on ({})", place.label()),
            ),
        };
        let label = place.label();
        let here =
            |d: Diagnostics, repath: bool| placing::at_place(d, &label, repath.then_some(&path));
        let at = places::at(&cfg_view, &place);
        let spec = match desired::validate(&with_stand_ins(&at), catalog) {
            Ok(s) => s,
            Err(d) => {
                diags.extend(here(d, true));
                continue;
            }
        };
        let mut own = Diagnostics::new();
        cloud_blocks::check_own(&at, spec.cloud, Some(&spec.region), &mut own);
        diags.extend(here(own, false));
        let kept = (!pinned).then(Vec::new);
        let want = desired::with_types(spec, kept, catalog, settings, &at);
        let mut checks = Diagnostics::new();
        super::plan::check_account(
            &want,
            settings,
            path.clone().then_attr("cluster"),
            &mut checks,
        );
        diags.extend(checks);
        let preview = match desired::price(&want, prior_cost) {
            Ok(p) => p,
            Err(d) => {
                diags.extend(here(d, true));
                continue;
            }
        };
        if let Some(budget) = settings.max_monthly_usd
            && let Err(e) = cost::check_budget(&preview, budget)
        {
            diags
                .push(Diagnostic::error("Over budget", format!("At {name}: {e}")).at(path.clone()));
        }
        out.push(Priced { place, preview });
    }
    out
}

/// Writes `placement` and `attempts` of a planned pool. `placing`: the apply places it (a
/// create or replacement: where is known, since when is not; with failover, see
/// [`unknown_until_placed`]). Otherwise the place stays, its instance type follows the
/// pool's, and `attempts` stays as the last placing apply left it.
pub fn fill_placement(planned: &mut Value, prior: &Value, placing: bool) {
    let first = places::first_type(planned);
    if placing {
        let own = places::own(planned);
        let placement = own.map_or_else(Value::unknown, |p| p.placement(first, Value::unknown()));
        set(planned, "placement", placement);
        set(planned, "attempts", Value::unknown());
        return;
    }
    if let Some(at) = places::placement(prior) {
        set(
            planned,
            "placement",
            at.placement(first, placing::since(prior)),
        );
    }
    let attempts = prior.get_attr("attempts").cloned().unwrap_or(Value::Null);
    set(planned, "attempts", attempts);
}

/// Marks unknown what only the apply that places the pool can say: where (`placement`,
/// `id`), what it tried (`attempts`), its groups, instance types (unless pinned), prices,
/// the time to ready and the subnets EKS picks.
pub fn unknown_until_placed(planned: &mut Value, pinned: bool) {
    for a in COST_ATTRIBUTES.iter().chain(&[
        "id",
        "node_groups",
        "placement",
        "attempts",
        TIME_TO_READY,
        super::floor::FLOOR_UP,
    ]) {
        set(planned, a, Value::unknown());
    }
    if !pinned {
        set(planned, "instance_types", Value::unknown());
    }
    if let Value::Object(m) = planned
        && let Some(Value::Object(aws)) = m.get_mut("aws")
        && aws
            .get("subnet_ids")
            .is_none_or(|v| v.is_null() || !v.is_wholly_known())
    {
        aws.insert("subnet_ids".into(), Value::unknown());
    }
}

/// `$1,234.00/month`.
fn monthly(usd: f64) -> String {
    format!("{}/month", format_usd(usd))
}

/// The plan's warning when the apply may place the pool: the price where it is tried
/// first and the range if it fails over, the order, and each place's preview. When it
/// runs on failover place `current` now, the warning says the apply tries to return.
pub fn walk_warning(
    want: &Desired,
    preview: &CostPreview,
    elsewhere: &[Priced],
    current: Option<&Place>,
    prior: &Value,
) -> Diagnostic {
    let name = &want.spec.name;
    let first = Place {
        cloud: want.spec.cloud,
        region: want.spec.region.clone(),
        cluster: want.spec.cluster.clone(),
    };
    let others: Vec<&Priced> = elsewhere
        .iter()
        .filter(|p| current.is_none_or(|c| !p.place.same(c)))
        .collect();
    let dearest = others
        .iter()
        .max_by(|a, b| a.preview.monthly_usd.total_cmp(&b.preview.monthly_usd));
    let lead = placing::walk_lead(
        preview.monthly_usd,
        &first.label(),
        dearest.map(|d| (d.preview.monthly_usd, d.place.label())),
    );
    let order: Vec<String> = std::iter::once(first.label())
        .chain(others.iter().map(|p| p.place.label()))
        .collect();
    let mut detail = match current {
        None => format!(
            "Places, tried in this order until one brings the pool up within `capacity_wait`: {}. A place that answers with no capacity (stockout, quota, not offered) or is too slow is cleaned up before the next is tried.",
            order.join(" → ")
        ),
        Some(at) => {
            let now = elsewhere
                .iter()
                .find(|p| p.place.same(at))
                .map(|p| format!(" ({} there)", monthly(p.preview.monthly_usd)))
                .unwrap_or_default();
            format!(
                "It runs on its failover place {}{now} since {}. This apply creates it again at the places before it ({}), first {lead}; once the new node groups are up it deletes them from {}. If those places still say no, it stays where it is and the apply says so in a warning.",
                at.label(),
                placing::since_text(prior),
                order.join(" → "),
                at.label()
            )
        }
    };
    detail.push_str(&format!("\nAt {}: {}", first.label(), preview.summary()));
    for p in &others {
        detail.push_str(&format!(
            "\nAt {}: {}",
            p.place.label(),
            p.preview.summary()
        ));
    }
    let title = match current {
        None => format!("gpu_node_pool.{name}: {lead}"),
        Some(_) => format!(
            "gpu_node_pool `{name}` tries to return to {}",
            first.label()
        ),
    };
    Diagnostic::warning(title, detail)
}

/// The warning of a plan that keeps the pool on failover place `at`: since when, why (the
/// earlier places' answers), and how to go back.
pub fn staying(prior: &Value, at: &Place, proposed: &Value) -> Diagnostic {
    let name = model::text(&super::model::PoolModel::of(proposed).name);
    let answers = crate::resources::placing::earlier_answers(prior);
    let why = if answers.is_empty() {
        String::new()
    } else {
        format!(", because {}", answers.join("; "))
    };
    let back = match places::own(proposed) {
        Some(own) => format!(
            "set `failback = \"on_apply\"` to try {} again at the next apply (the pool is created there before it is deleted here)",
            own.label()
        ),
        None => "set `failback = \"on_apply\"` to try the earlier places again".to_string(),
    };
    Diagnostic::warning(
        format!(
            "gpu_node_pool `{name}` runs on its failover place {}",
            at.label()
        ),
        format!(
            "It runs on {} (cluster {}) since {}{why}. It stays there while the place holds it (`failback = \"never\"`); {back}.",
            at.label(),
            at.cluster,
            placing::since_text(prior)
        ),
    )
}
