//! Planning a commitment: validation (no cloud call), then the price call (capacity-block
//! offerings), the money and break-even, the purchase guard and the warning a person
//! approves. A bought commitment never changes: a change that would need a new purchase
//! is an error on its attribute, and a re-spelling keeps the prior value.

use gpu_core::catalog::Catalog;
use gpu_core::commitment::price::{self, CommitmentQuote, describe_term, usd};
use gpu_core::commitment::rank_offerings;
use gpu_core::commitment::rates;
use gpu_core::commitment::spec::{self, Candidate, CommitmentSpec, OnDestroy, Term};
use gpu_core::commitment::{CapacityBlockOffering, CommitmentKind, OfferingQuery};
use gpu_core::offer::Cloud;
use gpu_core::pool::spelling;
use gpu_core::pool::validate::FieldError;
use gpu_core::seam::commitments::capacity_block_offerings;
use gpu_core::time::{format_rfc3339, parse_rfc3339, unix_now};
use tfplugin::provider::{PlanResourceChangeRequest, PlanResourceChangeResponse};
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Value};

use super::cloud_blocks::{self, aws, azure};
use super::model::CommitmentModel;
use super::{FIXED, Settings, core_config, tags};
use crate::model_values::{opt, text, value_of};
use tfplugin::Tf;

/// Most instance types whose offerings are read when `gpu` leaves the type open.
const MAX_TYPES_ASKED: usize = 4;

/// Where offerings come from: the cloud's adapter for a region (a test's fake in tests).
pub type OfferingSource<'a> = &'a dyn gpu_core::seam::ConnectCommitments;

/// Plans a create, an update (state only) or a destroy of a commitment.
pub async fn plan(
    req: &PlanResourceChangeRequest,
    settings: &Settings,
    catalog: &Catalog,
    offerings: OfferingSource<'_>,
) -> PlanResourceChangeResponse {
    let (prior, proposed, config) = (&req.prior_state, &req.proposed_new_state, &req.config);
    if proposed.is_null() {
        return plan_destroy(prior);
    }
    if !prior.is_null() {
        return plan_update(prior, proposed, config);
    }
    plan_create(proposed, config, settings, catalog, offerings).await
}

fn respond(planned: Value, diagnostics: Diagnostics) -> PlanResourceChangeResponse {
    PlanResourceChangeResponse {
        planned_state: planned,
        requires_replace: Vec::new(),
        planned_private: Vec::new(),
        diagnostics,
    }
}

pub(super) fn set(v: &mut Value, name: &str, value: Value) {
    if let Value::Object(m) = v {
        m.insert(name.to_string(), value);
    }
}

/// Field errors as diagnostics on their attributes.
pub fn field_diagnostics(errors: &[FieldError]) -> Diagnostics {
    let mut d = Diagnostics::new();
    for e in errors {
        d.push(
            Diagnostic::error(format!("Invalid {}", e.attribute), format!("{e}."))
                .at(crate::resources::node_pool::paths::parse(&e.attribute)),
        );
    }
    d
}

/// The configuration's problems, without the clock; unknown inputs wait for the plan.
pub fn validate_config(config: &Value, catalog: &Catalog) -> Diagnostics {
    if INPUTS
        .iter()
        .chain(["on_destroy", "term", "billing"].iter())
        .any(|n| config.get_attr(n).is_some_and(|v| !v.is_wholly_known()))
    {
        return Diagnostics::new();
    }
    match spec::validate(&core_config(config), catalog, None) {
        Ok(_) => Diagnostics::new(),
        Err(errors) => field_diagnostics(&errors),
    }
}

/// What destroying `prior` does, by its `on_destroy`: refuse (non-cancellable), forget
/// (it keeps billing) or cancel.
pub fn on_destroy_of(prior: &Value) -> Option<OnDestroy> {
    let m = CommitmentModel::of(prior);
    let kind = text(&m.kind).parse::<CommitmentKind>().ok()?;
    Some(
        match text(&m.on_destroy).trim().to_ascii_lowercase().as_str() {
            "forget" => OnDestroy::Forget,
            _ if kind.cancellable() => OnDestroy::Cancel,
            _ => OnDestroy::Refuse,
        },
    )
}

/// The error of destroying a commitment that cannot be cancelled.
pub fn refuse_destroy(prior: &Value) -> Diagnostic {
    let m = CommitmentModel::of(prior);
    Diagnostic::error(
        "A commitment that cannot be cancelled cannot be destroyed",
        format!(
            "{} {} is a {} bought until {}: destroying it would not stop its bill. To drop it \
             from Terraform while it keeps billing in the cloud, set `on_destroy = \"forget\"`, \
             apply, then destroy.",
            text(&m.kind),
            text(&m.commitment_id),
            text(&m.kind).replace('_', " "),
            match text(&m.end) {
                e if e.is_empty() => "its end".to_string(),
                e => e,
            }
        ),
    )
    .at(AttributePath::attr("on_destroy"))
}

fn plan_destroy(prior: &Value) -> PlanResourceChangeResponse {
    let m = CommitmentModel::of(prior);
    let mut d = Diagnostics::new();
    match on_destroy_of(prior) {
        Some(OnDestroy::Refuse) => d.push(refuse_destroy(prior)),
        Some(OnDestroy::Forget) => d.push(Diagnostic::warning(
            "Forgetting a commitment that keeps billing",
            format!(
                "{} {} will be removed from state only: it stays in the cloud and bills until {}.",
                text(&m.kind),
                text(&m.commitment_id),
                match text(&m.end) {
                    e if e.is_empty() => "it is cancelled there".to_string(),
                    e => e,
                }
            ),
        )),
        _ => d.push(Diagnostic::warning(
            "Cancelling a commitment",
            format!(
                "{} {} will be cancelled: the capacity it holds is released and its bill stops.",
                text(&m.kind),
                text(&m.commitment_id)
            ),
        )),
    }
    respond(Value::Null, d)
}

/// Whether two spellings of attribute `name` mean the same commitment.
fn same_meaning(name: &str, prior: Option<&Value>, new: Option<&Value>) -> bool {
    let p = prior.cloned().unwrap_or(Value::Null);
    let n = new.cloned().unwrap_or(Value::Null);
    if p == n {
        return true;
    }
    let (ps, ns) = (p.as_str(), n.as_str());
    match name {
        "kind" => {
            ps.and_then(|s| s.parse::<CommitmentKind>().ok()).is_some()
                && ps.and_then(|s| s.parse::<CommitmentKind>().ok())
                    == ns.and_then(|s| s.parse::<CommitmentKind>().ok())
        }
        "gpu" => {
            let g = |s: Option<&str>| {
                s.and_then(|s| gpu_core::gpu::lookup(s).ok())
                    .map(|m| m.name)
            };
            g(ps).is_some() && g(ps) == g(ns)
        }
        "start_after" | "start_before" | "end" => {
            ps.and_then(parse_rfc3339).is_some()
                && ps.and_then(parse_rfc3339) == ns.and_then(parse_rfc3339)
        }
        "region" => match (ps, ns) {
            // Azure's display names lose their spaces (`East US` is `eastus`).
            (Some(a), Some(b)) => {
                spelling::region(Some(Cloud::Azure), a) == spelling::region(Some(Cloud::Azure), b)
            }
            _ => false,
        },
        "zone" | "instance_type" | "term" | "billing" => match (ps, ns) {
            (Some(a), Some(b)) => a.trim().eq_ignore_ascii_case(b.trim()),
            _ => false,
        },
        "aws" => cloud_blocks::aws::same_block(&p, &n),
        _ => false,
    }
}

fn shown(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "null".to_string(),
        Some(Value::String(s)) => format!("\"{s}\""),
        Some(Value::Number(n)) => n.as_f64().to_string(),
        Some(other) => format!("a new {}", other.kind_name()),
    }
}

fn plan_update(prior: &Value, proposed: &Value, config: &Value) -> PlanResourceChangeResponse {
    let (old_m, config_m) = (CommitmentModel::of(prior), CommitmentModel::of(config));
    let mut d = Diagnostics::new();
    for name in FIXED {
        let (p, n) = (prior.get_attr(name), proposed.get_attr(name));
        if n.is_some_and(|v| !v.is_wholly_known()) {
            continue;
        }
        // Optional and computed: left out of the configuration, the bought value stands.
        if COMPUTED_INPUTS.contains(name) && config.get_attr(name).is_none_or(Value::is_null) {
            continue;
        }
        if !same_meaning(name, p, n) {
            d.push(
                Diagnostic::error(
                    "A bought commitment cannot be changed",
                    format!(
                        "`{name}` would change from {} to {}: that would need a new purchase, \
                         and {} {} is already bought. Put the old value back. To buy another \
                         commitment, add a new `gpu_commitment`; to stop tracking this one, set \
                         `on_destroy = \"forget\"` (it keeps billing) or, if it can be \
                         cancelled, remove it to cancel it.",
                        shown(p),
                        shown(n),
                        text(&old_m.kind),
                        text(&old_m.commitment_id),
                    ),
                )
                .at(AttributePath::attr(*name)),
            );
        }
    }
    // `on_destroy` is the one input that may change: it is state only.
    let mut planned = prior.clone();
    // Terraform keeps the prior value of an input only when both it and the configuration
    // are set: a value written out that means what was left out (an `aws` block with the
    // defaults, after an import that left it out) is planned as written, a state-only
    // update.
    for name in FIXED.iter().filter(|n| !COMPUTED_INPUTS.contains(n)) {
        let (p, c) = (prior.get_attr(name), proposed.get_attr(name));
        let unset = |v: Option<&Value>| v.is_none_or(Value::is_null);
        if unset(p) != unset(c) && c.is_none_or(Value::is_wholly_known) && same_meaning(name, p, c)
        {
            set(&mut planned, name, c.cloned().unwrap_or(Value::Null));
        }
    }
    let new_on_destroy = value_of(&config_m.on_destroy);
    if config_m.on_destroy.is_unknown() {
        set(&mut planned, "on_destroy", new_on_destroy);
    } else {
        let kind = text(&old_m.kind).parse::<CommitmentKind>().ok();
        let canon = |t: &Tf<String>| opt(t).map(|s| s.trim().to_ascii_lowercase());
        let (old, new) = (canon(&old_m.on_destroy), canon(&config_m.on_destroy));
        if old != new {
            match (new.as_deref(), kind) {
                (None | Some("forget"), _) => {}
                (Some("cancel"), Some(k)) if k.cancellable() => {}
                (Some("cancel"), _) => d.push(
                    Diagnostic::error(
                        "Invalid on_destroy",
                        format!("`on_destroy`: \"{}\" cannot be cancelled once bought: remove `on_destroy`, or set \"forget\".", text(&old_m.kind)),
                    )
                    .at(AttributePath::attr("on_destroy")),
                ),
                (Some(v), _) => d.push(
                    Diagnostic::error("Invalid on_destroy", format!("`on_destroy` is \"{v}\": write \"cancel\" or \"forget\"."))
                        .at(AttributePath::attr("on_destroy")),
                ),
            }
            set(&mut planned, "on_destroy", new_on_destroy);
        }
    }
    if let Some(w) = super::usage::low_use_warning(prior) {
        d.push(w);
    }
    respond(planned, d)
}

/// Inputs the provider fills when the configuration leaves them out.
const COMPUTED_INPUTS: &[&str] = &["zone", "instance_type", "end"];

/// The inputs that must be known before a commitment can be priced.
const INPUTS: &[&str] = &[
    "kind",
    "region",
    "zone",
    "gpu",
    "gpu_count",
    "instance_type",
    "instance_count",
    "duration_hours",
    "start_after",
    "start_before",
    "end",
    "tags",
    "aws",
];

pub(super) async fn plan_create(
    proposed: &Value,
    config: &Value,
    settings: &Settings,
    catalog: &Catalog,
    offerings: OfferingSource<'_>,
) -> PlanResourceChangeResponse {
    let mut planned = proposed.clone();
    for name in [
        "id",
        "commitment_id",
        "status",
        "used_instances",
        "utilization",
        "idle_monthly_usd",
    ] {
        set(&mut planned, name, Value::unknown());
    }
    if INPUTS
        .iter()
        .any(|n| config.get_attr(n).is_some_and(|v| !v.is_wholly_known()))
    {
        // Priced when the inputs are known (Terraform plans again before applying).
        return respond(planned, Diagnostics::new());
    }
    let now = unix_now() as i64;
    let spec = match spec::validate(&core_config(config), catalog, Some(now)) {
        Ok(s) => s,
        Err(errors) => return respond(planned, field_diagnostics(&errors)),
    };
    let mut d = Diagnostics::new();
    let chosen = match spec.kind {
        CommitmentKind::AwsCapacityBlock => match choose_offering(&spec, offerings).await {
            Ok(pick) => pick,
            Err(diag) => return respond(planned, diag.into()),
        },
        _ => None,
    };
    if spec.kind.cloud() == Cloud::Azure && settings.clouds.azure_subscription().is_none() {
        return respond(
            planned,
            Diagnostic::error(
                "Azure commitments need the provider's azure.subscription_id",
                format!(
                    "A `kind = \"{}\"` commitment is bought in the provider's \
                     `azure.subscription_id`: set it in the `provider \"gpu\"` block's `azure` block.",
                    spec.kind
                ),
            )
            .at(AttributePath::attr("kind"))
            .into(),
        );
    }
    if spec.kind == CommitmentKind::AzureCapacityReservation
        && azure::resource_group(&CommitmentModel::of(config).azure).is_none_or(|g| g.is_empty())
    {
        return respond(
            planned,
            Diagnostic::error(
                "Invalid azure",
                "`azure`: an Azure capacity reservation is created in a resource group: set `azure { resource_group = \"...\" }`.",
            )
            .at(AttributePath::attr("azure"))
            .into(),
        );
    }
    let mut quoted_id: Option<String> = None;
    let (candidate, quote, source) = match &chosen {
        Some((o, c)) => (
            c.clone(),
            price::capacity_block(
                o.upfront_fee,
                f64::from(o.duration_hours),
                o.instance_count * c.gpus_per_instance,
                c.on_demand_usd_per_gpu_hour(),
            ),
            format!(
                "offering {} (EC2 DescribeCapacityBlockOfferings, read at plan); on demand: {}",
                o.id,
                origin_note(c)
            ),
        ),
        None if spec.kind == CommitmentKind::AzureReservation => {
            let c = spec.cheapest().clone();
            match azure_quote(&spec, &c, config, settings, offerings).await {
                Ok((q, note, id)) => {
                    quoted_id = Some(id);
                    (c, q, note)
                }
                Err(diag) => return respond(planned, diag.into()),
            }
        }
        None if spec.kind == CommitmentKind::GcpCommitment => {
            let c = spec.cheapest().clone();
            match committed_quote(&spec, &c) {
                Ok((q, note)) => (c, q, note),
                Err(diag) => return respond(planned, diag.into()),
            }
        }
        None => {
            let c = spec.cheapest().clone();
            let hours = match spec.term {
                Term::UntilCancelled { end: Some(end) } => Some((end - now) as f64 / 3600.0),
                _ => None,
            };
            let q = price::at_on_demand_rate(
                c.on_demand_usd_per_hour,
                spec.instance_count,
                c.gpus_per_instance,
                hours.map(|h| h.ceil()),
            );
            let note = format!("billed at the on-demand rate: {}", origin_note(&c));
            (c, q, note)
        }
    };
    if spec.kind.cloud() == Cloud::Gcp && settings.clouds.gcp_project().is_none() {
        return respond(
            planned,
            Diagnostic::error(
                "Google Cloud commitments need the provider's gcp.project",
                format!(
                    "A `kind = \"{}\"` commitment is bought in the provider's `gcp.project`: set \
                     it in the `provider \"gpu\"` block's `gcp` block.",
                    spec.kind
                ),
            )
            .at(AttributePath::attr("kind"))
            .into(),
        );
    }
    set(
        &mut planned,
        "instance_type",
        Value::string(&candidate.instance_type),
    );
    set(
        &mut planned,
        "gpus",
        Value::number(i64::from(spec.instance_count * candidate.gpus_per_instance)),
    );
    fill_money(&mut planned, &quote);
    set(&mut planned, "price_source", Value::string(source));
    match &chosen {
        Some((o, _)) => {
            set(&mut planned, "offering_id", Value::string(&o.id));
            set(&mut planned, "zone", Value::string(&o.zone));
            set(
                &mut planned,
                "start",
                Value::string(format_rfc3339(o.start)),
            );
            set(&mut planned, "end", Value::string(format_rfc3339(o.end)));
        }
        None => {
            // An Azure quote's order id changes with every quote, and Terraform plans again
            // at apply: the id is known after apply (apply quotes again and buys only at the
            // planned total).
            set(
                &mut planned,
                "offering_id",
                if quoted_id.is_some() {
                    Value::unknown()
                } else {
                    Value::Null
                },
            );
            set(
                &mut planned,
                "zone",
                Value::string(spec.zone.clone().unwrap_or_default()),
            );
            set(&mut planned, "start", Value::unknown());
            if CommitmentModel::of(config).end.is_null() {
                // A committed use discount or a reservation ends a term after it starts
                // (known after apply).
                let end = if matches!(spec.term, Term::Years { .. }) {
                    Value::unknown()
                } else {
                    Value::Null
                };
                set(&mut planned, "end", end);
            }
            if spec.zone.is_none() {
                set(&mut planned, "zone", Value::Null);
            }
        }
    }
    let what = describe(&spec, &candidate, chosen.as_ref().map(|(o, _)| o));
    let money = money_line(&spec, &quote);
    if !settings.allow_purchase {
        d.push(
            Diagnostic::error(
                "Commitment purchases are not allowed by the provider configuration",
                format!(
                    "This `kind = \"{}\"` commitment would buy {what}: {money}. {} Set \
                     `allow_commitment_purchase = true` in the `provider \"gpu\"` block to allow \
                     purchases.",
                    spec.kind,
                    if spec.kind.cancellable() {
                        "It bills until cancelled."
                    } else {
                        "It cannot be cancelled or refunded once bought."
                    }
                ),
            )
            .at(AttributePath::attr("kind")),
        );
    } else {
        d.push(Diagnostic::warning(
            if spec.kind.cancellable() {
                format!("COMMITMENT: {money}")
            } else {
                format!("IRREVERSIBLE: {money}")
            },
            format!(
                "Apply buys {what}. {}",
                if spec.kind.cancellable() {
                    "It bills whether used or not until it is cancelled (destroy cancels it)."
                } else {
                    "It cannot be cancelled or refunded: destroy fails unless `on_destroy = \"forget\"`, and the bill stays."
                }
            ),
        ));
    }
    respond(planned, d)
}

fn origin_note(c: &Candidate) -> String {
    match (c.on_demand_usd_per_hour, &c.on_demand_origin) {
        (Some(p), o) => format!(
            "{} at ${p}/h from {} ({})",
            c.instance_type,
            if o.source.is_empty() {
                "the catalog".to_string()
            } else {
                o.labelled_source()
            },
            o.as_of.as_deref().unwrap_or("undated")
        ),
        (None, _) => format!("no on-demand price for {} in the catalog", c.instance_type),
    }
}

fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// `x` rounded, as a decimal number: what Terraform keeps after the value has been
/// through state (JSON), so another resource that reads it (a pool's
/// `reservation.usd_per_gpu_hour`) sees the same number at plan and at apply. As a binary
/// float, Terraform 1.0 finds `7.673` (float) and `7.673` (decimal) different and fails
/// the apply with "inconsistent final plan".
pub(super) fn decimal(x: f64) -> Value {
    let r = round(x);
    match tfplugin::value::Number::parse(&format!("{r}")) {
        Ok(n) if r.is_finite() => Value::number(n),
        _ => Value::number(r),
    }
}

fn fill_money(planned: &mut Value, q: &CommitmentQuote) {
    let num = |x: Option<f64>| x.map_or(Value::Null, decimal);
    set(planned, "upfront_usd", num(q.upfront_usd));
    set(planned, "hourly_usd", num(q.hourly_usd));
    set(planned, "monthly_usd", num(q.monthly_usd));
    set(planned, "total_usd", num(q.total_usd));
    set(
        planned,
        "effective_usd_per_gpu_hour",
        num(q.effective_usd_per_gpu_hour),
    );
    set(
        planned,
        "on_demand_usd_per_gpu_hour",
        num(q.on_demand_usd_per_gpu_hour),
    );
    set(
        planned,
        "break_even_utilization",
        num(q.break_even_utilization),
    );
}

fn describe(spec: &CommitmentSpec, c: &Candidate, o: Option<&CapacityBlockOffering>) -> String {
    match o {
        Some(o) => format!(
            "capacity block {} ({} × {} in {}, {} to {})",
            o.id,
            o.instance_count,
            o.instance_type,
            o.zone,
            format_rfc3339(o.start),
            format_rfc3339(o.end)
        ),
        None => match spec.term {
            Term::Years { years, .. } => format!(
                "a {years}-year {} for {} × {} in {}",
                if spec.kind.cloud() == Cloud::Azure {
                    "reserved VM instance"
                } else {
                    "committed use discount"
                },
                spec.instance_count,
                c.instance_type,
                spec.region
            ),
            _ => format!(
                "a capacity reservation of {} × {} in {}",
                spec.instance_count,
                c.instance_type,
                spec.zone.as_deref().unwrap_or(&spec.region)
            ),
        },
    }
}

/// `$X over 48 hours` (or per month until cancelled), with the break-even when known.
pub fn money_line(spec: &CommitmentSpec, q: &CommitmentQuote) -> String {
    let total = match (q.total_usd, q.monthly_usd) {
        (Some(t), _) => format!("{} over {}", usd(t), describe_term(q.term_hours)),
        (None, Some(m)) => format!("{} per month until cancelled", usd(m)),
        (None, None) => "cost unknown (the catalog has no on-demand price for it)".to_string(),
    };
    let per_gpu = match (q.effective_usd_per_gpu_hour, q.break_even_utilization) {
        (Some(e), Some(b)) => format!(
            ", {}/GPU-hour, break-even at {:.0}% use against on demand",
            usd(e),
            b * 100.0
        ),
        (Some(e), None) => format!(", {}/GPU-hour (no on-demand price to compare)", usd(e)),
        _ => String::new(),
    };
    let _ = spec;
    format!("{total}{per_gpu}")
}

/// The cheapest capacity-block offering per GPU-hour for `spec` across its candidate types
/// (and its zone, when set), with the candidate it is of; an error naming what to widen
/// when there is none.
async fn choose_offering(
    spec: &CommitmentSpec,
    offerings: OfferingSource<'_>,
) -> Result<Option<(CapacityBlockOffering, Candidate)>, Diagnostic> {
    let Term::Window {
        hours,
        start_after,
        start_before,
    } = spec.term
    else {
        return Ok(None);
    };
    let store = offerings
        .commitments(Cloud::Aws, &spec.region)
        .await
        .map_err(|e| {
            Diagnostic::error("Cannot connect to AWS", e.to_string())
                .at(AttributePath::attr("region"))
        })?;
    let mut all = Vec::new();
    for c in spec.candidates.iter().take(MAX_TYPES_ASKED) {
        let q = OfferingQuery {
            region: spec.region.clone(),
            instance_type: c.instance_type.clone(),
            instance_count: spec.instance_count,
            duration_hours: hours,
            start_after,
            start_before,
        };
        match capacity_block_offerings(store.as_ref(), &q).await {
            Ok(list) => all.extend(list.into_iter().filter(|o| {
                o.instance_count == spec.instance_count
                    && o.duration_hours == hours
                    && o.start >= start_after
                    && o.start <= start_before
                    && spec.zone.as_deref().is_none_or(|z| o.zone == z)
                    && o.currency.eq_ignore_ascii_case("USD")
            })),
            Err(e) => {
                return Err(Diagnostic::error(
                    "Cannot read capacity block offerings",
                    format!("EC2 DescribeCapacityBlockOfferings in {}: {e}", spec.region),
                )
                .at(AttributePath::attr("region")));
            }
        }
    }
    let gpus = |t: &str| {
        spec.candidates
            .iter()
            .find(|c| c.instance_type == t)
            .map(|c| c.gpus_per_instance)
    };
    rank_offerings(&mut all, gpus);
    match all.into_iter().next() {
        Some(o) => {
            let c = spec
                .candidates
                .iter()
                .find(|c| c.instance_type == o.instance_type)
                .cloned()
                .unwrap_or_else(|| spec.cheapest().clone());
            Ok(Some((o, c)))
        }
        None => Err(Diagnostic::error(
            "No capacity block offering matches",
            format!(
                "EC2 offers no capacity block of {} × {} for {hours} hours starting between {} and {} in {}{}. Widen the start window (`start_after`, `start_before`, at most 8 weeks ahead), change `duration_hours` or `instance_count`, or try another region; the `gpu_capacity_block_offers` data source lists what is offered.",
                spec.instance_count,
                spec.candidates
                    .iter()
                    .take(MAX_TYPES_ASKED)
                    .map(|c| c.instance_type.as_str())
                    .collect::<Vec<_>>()
                    .join(" or "),
                format_rfc3339(start_after),
                format_rfc3339(start_before),
                spec.region,
                spec.zone.as_deref().map(|z| format!(" (zone {z})")).unwrap_or_default(),
            ),
        )
        .at(AttributePath::attr("start_before"))),
    }
}

/// Tags, platform and criteria the purchase will carry (for apply and tests).
pub fn purchase_inputs(
    v: &Value,
    settings: &Settings,
) -> (std::collections::BTreeMap<String, String>, String, String) {
    {
        let aws_block = CommitmentModel::of(v).aws;
        (
            tags(v, settings),
            aws::platform(&aws_block),
            aws::match_criteria(&aws_block),
        )
    }
}

/// The money of a committed use discount from the published rate of its machine type, or an
/// error: an irreversible purchase at an unknown price is refused, never bought blind.
fn committed_quote(
    spec: &CommitmentSpec,
    c: &Candidate,
) -> Result<(CommitmentQuote, String), Diagnostic> {
    let Term::Years { years, billing } = spec.term else {
        return Err(Diagnostic::error(
            "Invalid term",
            "`term`: is required: \"1y\" or \"3y\"",
        ));
    };
    let term = format!("{years}y");
    let billing = match billing {
        spec::Billing::Monthly => "monthly",
        spec::Billing::Upfront => "upfront",
    };
    let rate = rates::lookup(
        spec.kind.cloud(),
        &spec.region,
        &c.instance_type,
        &term,
        billing,
    );
    let per_hour = rate.and_then(|r| r.usd_per_hour(c.on_demand_usd_per_hour));
    match (rate, per_hour) {
        (Some(r), Some(p)) => {
            let hours = f64::from(years) * 8760.0;
            let q = price::committed(
                p,
                spec.instance_count,
                c.gpus_per_instance,
                hours,
                c.on_demand_usd_per_gpu_hour(),
                billing == "upfront",
            );
            let note = format!(
                "published {term} rate for {} in {}: {} ({}); on demand: {}",
                c.instance_type,
                spec.region,
                r.source,
                r.as_of.as_deref().unwrap_or("undated"),
                origin_note(c)
            );
            Ok((q, note))
        }
        _ => Err(Diagnostic::error(
            "No known price for this commitment",
            format!(
                "The provider has no published {term} commitment rate for {} in {} (see the \
                 commitment rates in the provider's data sources page), so it cannot show what \
                 this irreversible purchase would cost, and it does not buy blind. Commit a \
                 machine type and region that have a rate, or buy this one in the Google Cloud \
                 console.",
                c.instance_type, spec.region
            ),
        )
        .at(AttributePath::attr("instance_type"))),
    }
}

/// The money of an Azure reservation from Azure's own quote (`calculatePrice`), and the
/// quote's order id (what apply buys with).
async fn azure_quote(
    spec: &CommitmentSpec,
    c: &Candidate,
    config: &Value,
    settings: &Settings,
    offerings: OfferingSource<'_>,
) -> Result<(CommitmentQuote, String, String), Diagnostic> {
    let Term::Years { years, billing } = spec.term else {
        return Err(Diagnostic::error(
            "Invalid term",
            "`term`: is required: \"1y\" or \"3y\"",
        ));
    };
    let order = azure::reservation_order(
        &spec.region,
        &c.instance_type,
        spec.instance_count,
        years,
        billing == spec::Billing::Upfront,
        &tags(config, settings),
        String::new(),
    );
    let fail = |e: String| {
        Diagnostic::error("Cannot price the Azure reservation", e).at(AttributePath::attr("kind"))
    };
    let store = offerings
        .commitments(Cloud::Azure, &spec.region)
        .await
        .map_err(|e| fail(e.to_string()))?;
    let q = store
        .quote(&order)
        .await
        .map_err(|e| fail(format!("Azure calculatePrice: {e}")))?
        .ok_or_else(|| fail("Azure gave no price".into()))?;
    if !q.currency.eq_ignore_ascii_case("USD") {
        return Err(fail(format!(
            "Azure quoted {} {}; the provider shows money in USD only and does not convert",
            q.total, q.currency
        )));
    }
    let hours = f64::from(years) * 8760.0;
    let per_instance_hour = q.total / (hours * f64::from(spec.instance_count.max(1)));
    let quote = price::committed(
        per_instance_hour,
        spec.instance_count,
        c.gpus_per_instance,
        hours,
        c.on_demand_usd_per_gpu_hour(),
        billing == spec::Billing::Upfront,
    );
    let note = format!(
        "Azure calculatePrice, read at plan and again at apply; on demand: {}",
        origin_note(c)
    );
    Ok((quote, note, q.id))
}
