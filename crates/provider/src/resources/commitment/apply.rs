//! Applying and reading a commitment: buy exactly what the plan showed (at most once for
//! its key), change state only on update, refuse / forget / cancel on destroy, and read the
//! status live.

use gpu_core::commitment::spec::OnDestroy;
use gpu_core::commitment::{
    CommitmentStatus, Commitments, LiveCommitment, Order, Purchased, purchase_key, purchase_once,
};
use gpu_core::seam::CloudError;
use gpu_core::time::{format_rfc3339, parse_rfc3339, unix_now};
use tfplugin::provider::{ApplyResourceChangeResponse, ReadResourceResponse};
use tfplugin::{Diagnostic, Diagnostics, Value};

use super::Settings;
use super::cloud_blocks::{self, Planned, location};
use super::model::CommitmentModel;
use super::plan::{on_destroy_of, purchase_inputs, refuse_destroy, set};
use crate::model_values::text;
use gpu_core::catalog::Catalog;

fn done(state: Value, diagnostics: Diagnostics) -> ApplyResourceChangeResponse {
    ApplyResourceChangeResponse {
        new_state: state,
        private: Vec::new(),
        diagnostics,
    }
}

/// Applies the planned change; `store` is the commitment adapter of the kind's cloud.
pub async fn apply(
    prior: &Value,
    planned: &Value,
    settings: &Settings,
    store: &dyn Commitments,
) -> ApplyResourceChangeResponse {
    if planned.is_null() {
        return destroy(prior, store).await;
    }
    if !prior.is_null() {
        // Only `on_destroy` can change, and it lives in state.
        return done(planned.clone(), Diagnostics::new());
    }
    create(planned, settings, store).await
}

/// The order a planned commitment places (`tags` name Compute Engine and Azure orders,
/// so that two commitments that differ only in tags get different names), made by its
/// kind's cloud.
pub fn order_of(
    planned: &Value,
    tags: &std::collections::BTreeMap<String, String>,
    catalog: &Catalog,
) -> Result<Order, String> {
    cloud_blocks::order(&Planned::of(planned, tags)?, catalog)
}

async fn create(
    planned: &Value,
    settings: &Settings,
    store: &dyn Commitments,
) -> ApplyResourceChangeResponse {
    let catalog = Catalog::embedded();
    if !settings.allow_purchase {
        // The plan refused already; a plan made under another configuration is refused too.
        return done(
            Value::Null,
            Diagnostic::error(
                "Commitment purchases are not allowed by the provider configuration",
                "Set `allow_commitment_purchase = true` in the `provider \"gpu\"` block to allow purchases.",
            )
            .into(),
        );
    }
    let (tags, _, _) = purchase_inputs(planned, settings);
    let order = match order_of(planned, &tags, catalog) {
        Ok(o) => o,
        Err(why) => {
            return done(
                Value::Null,
                Diagnostic::error("Invalid commitment", why).into(),
            );
        }
    };
    let order = match requote(order, planned, store).await {
        Ok(o) => o,
        Err(d) => return done(Value::Null, d.into()),
    };
    let key = purchase_key(&order, &tags);
    match purchase_once(store, &order, &key, &tags).await {
        Ok(p) => {
            let mut d = Diagnostics::new();
            if let Purchased::Found(c) = &p {
                d.push(Diagnostic::warning(
                    "Adopted a commitment bought earlier",
                    format!(
                        "{} (tagged gpu.tf/commitment = {key}) was bought by an earlier attempt \
                         whose answer was lost, or by an interrupted apply: it is adopted, not \
                         bought again.",
                        c.id
                    ),
                ));
            }
            done(state_of(planned, p.commitment()), d)
        }
        Err(e) => done(Value::Null, purchase_error(&order, &key, &e).into()),
    }
}

fn purchase_error(order: &Order, key: &str, e: &CloudError) -> Diagnostic {
    let hint = match (order, e) {
        (
            Order::CapacityBlock { offering_id, .. },
            CloudError::Invalid(_) | CloudError::NotFound(_),
        ) => format!(
            " The offering {offering_id} chosen at plan may be gone (sold, or its start passed): \
             run `terraform plan` again to choose from the current offerings and see their price. \
             Nothing was bought."
        ),
        (_, CloudError::InsufficientCapacity(_)) => {
            " The cloud has no capacity for this reservation in this zone now: try another \
             zone or instance type, or later. Nothing was bought."
                .to_string()
        }
        (_, CloudError::NotOffered(_)) => {
            " This size is not offered for reservations there: try another zone, region or \
             size. Nothing was bought."
                .to_string()
        }
        (_, CloudError::Quota(_)) => {
            " The account's quota there is too small: ask the cloud for more, or reserve \
             fewer. Nothing was bought."
                .to_string()
        }
        (_, CloudError::Transient(_) | CloudError::Other(_)) => format!(
            " Looking for a purchase tagged gpu.tf/commitment = {key} found none, so nothing \
             was bought; applying again is safe."
        ),
        _ => String::new(),
    };
    Diagnostic::error("Cannot buy the commitment", format!("{e}.{hint}"))
}

/// `planned` with what the cloud reports: ids, status, and the values known only now.
fn state_of(planned: &Value, c: &LiveCommitment) -> Value {
    let mut s = planned.clone();
    set(&mut s, "id", Value::string(&c.id));
    set(&mut s, "commitment_id", Value::string(&c.id));
    set(&mut s, "status", Value::string(c.status.as_str()));
    let fill = |s: &mut Value, name: &str, v: Option<String>| {
        if s.get_attr(name).is_some_and(|x| !x.is_known()) {
            set(s, name, v.map_or(Value::Null, Value::string));
        }
    };
    fill(&mut s, "start", c.start.map(format_rfc3339));
    fill(&mut s, "end", c.end.map(format_rfc3339));
    fill(&mut s, "zone", c.zone.clone());
    if CommitmentModel::of(&s).offering_id.is_unknown() {
        // Azure: the order id of the quote apply bought under.
        set(&mut s, "offering_id", Value::string(&c.id));
    }
    super::usage::record(&mut s, c.in_use.as_ref());
    s
}

async fn destroy(prior: &Value, store: &dyn Commitments) -> ApplyResourceChangeResponse {
    let id = text(&CommitmentModel::of(prior).commitment_id);
    match on_destroy_of(prior) {
        Some(OnDestroy::Forget) => done(
            Value::Null,
            Diagnostic::warning(
                "Commitment forgotten, still billing",
                format!(
                    "{id} was removed from state and left in the cloud, where it keeps billing."
                ),
            )
            .into(),
        ),
        Some(OnDestroy::Cancel) => match store.cancel(&location(prior), &id).await {
            Ok(()) => done(Value::Null, Diagnostics::new()),
            Err(CloudError::NotFound(_)) => done(Value::Null, Diagnostics::new()),
            Err(e) => done(
                prior.clone(),
                Diagnostic::error("Cannot cancel the commitment", format!("{id}: {e}")).into(),
            ),
        },
        _ => done(prior.clone(), refuse_destroy(prior).into()),
    }
}

/// Refresh: the status read live; a commitment the cloud no longer lists stays in state
/// (never bought again by accident) as expired or cancelled.
pub async fn read(current: &Value, store: &dyn Commitments) -> ReadResourceResponse {
    let m = CommitmentModel::of(current);
    let id = text(&m.commitment_id);
    let mut state = current.clone();
    if id.is_empty() {
        return ReadResourceResponse {
            new_state: state,
            private: Vec::new(),
            diagnostics: Diagnostics::new(),
        };
    }
    let diagnostics = match store.get(&location(current), &id).await {
        Ok(Some(c)) => {
            set(&mut state, "status", Value::string(c.status.as_str()));
            super::usage::record(&mut state, c.in_use.as_ref());
            Diagnostics::new()
        }
        Ok(None) => {
            let ended = m
                .end
                .known()
                .and_then(|e| parse_rfc3339(e))
                .is_some_and(|e| e <= unix_now() as i64);
            let status = if ended {
                CommitmentStatus::Expired
            } else {
                CommitmentStatus::Cancelled
            };
            set(&mut state, "status", Value::string(status.as_str()));
            super::usage::record(&mut state, None);
            Diagnostics::new()
        }
        Err(e) => Diagnostic::error("Cannot read the commitment", format!("{id}: {e}")).into(),
    };
    ReadResourceResponse {
        new_state: state,
        private: Vec::new(),
        diagnostics,
    }
}

/// An Azure reservation is bought under a fresh quote's order id, and only at the total the
/// plan showed (a cent of rounding allowed); any other order is returned as it is.
async fn requote(
    order: Order,
    planned: &Value,
    store: &dyn Commitments,
) -> Result<Order, Diagnostic> {
    let Order::AzureReservation { .. } = &order else {
        return Ok(order);
    };
    let planned_total = CommitmentModel::of(planned).total_usd.into_known();
    let quote = store
        .quote(&order)
        .await
        .map_err(|e| {
            Diagnostic::error(
                "Cannot price the Azure reservation",
                format!("{e}. Nothing was bought."),
            )
        })?
        .ok_or_else(|| {
            Diagnostic::error(
                "Cannot price the Azure reservation",
                "Azure gave no price. Nothing was bought.",
            )
        })?;
    match planned_total {
        Some(t)
            if quote.currency.eq_ignore_ascii_case("USD") && (quote.total - t).abs() <= 0.01 => {}
        _ => {
            return Err(Diagnostic::error(
                "The price changed since the plan",
                format!(
                    "Azure now quotes {} {} for this reservation; the plan showed {}. Nothing was bought: run `terraform plan` again to see the current price.",
                    quote.total,
                    quote.currency,
                    planned_total.map_or_else(|| "no price".to_string(), |t| format!("{t} USD"))
                ),
            ));
        }
    }
    let Order::AzureReservation {
        location,
        sku,
        term,
        billing_plan,
        quantity,
        display_name,
        ..
    } = order
    else {
        unreachable!("matched above")
    };
    Ok(Order::AzureReservation {
        location,
        sku,
        term,
        billing_plan,
        quantity,
        display_name,
        order_id: quote.id,
    })
}
