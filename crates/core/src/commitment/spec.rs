//! A commitment as configured (attribute-named, raw) → a validated [`CommitmentSpec`], with
//! every problem at once, each naming its attribute and what would be valid. No cloud call:
//! the instance types come from the catalog.

use std::collections::BTreeMap;

use crate::catalog::Catalog;
use crate::gpu::{self, GpuModel};
use crate::offer::{Cloud, PriceOrigin};
use crate::pool::spelling;
use crate::pool::validate::FieldError;
use crate::seam::commitment_kind::{CommitmentKind, TermStyle};
use crate::time::parse_rfc3339;

/// Capacity blocks can start at most this far ahead (8 weeks), in seconds.
pub const CAPACITY_BLOCK_HORIZON_SECS: i64 = 56 * 86_400;
/// Most instances one capacity block or reservation request may hold.
pub const MAX_INSTANCES: i64 = 64;

/// The raw inputs, named as the Terraform attributes are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommitmentConfig {
    /// `kind`.
    pub kind: String,
    /// `region`.
    pub region: String,
    /// `zone`.
    pub zone: Option<String>,
    /// `gpu`.
    pub gpu: Option<String>,
    /// `gpu_count` (GPUs per instance).
    pub gpu_count: Option<i64>,
    /// `instance_type`.
    pub instance_type: Option<String>,
    /// `instance_count`.
    pub instance_count: i64,
    /// `duration_hours` (capacity blocks).
    pub duration_hours: Option<i64>,
    /// `start_after` (capacity blocks): RFC 3339 or a date.
    pub start_after: Option<String>,
    /// `start_before` (capacity blocks): RFC 3339 or a date.
    pub start_before: Option<String>,
    /// `term` (`1y` | `3y`).
    pub term: Option<String>,
    /// `billing` (`upfront` | `monthly`).
    pub billing: Option<String>,
    /// `end` (capacity reservations): RFC 3339 or a date.
    pub end: Option<String>,
    /// `on_destroy` (`cancel` | `forget`).
    pub on_destroy: Option<String>,
}

/// How a commitment is paid, for the year-long kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Billing {
    /// All up front.
    Upfront,
    /// Monthly over the term.
    Monthly,
}

/// A commitment's length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    /// A capacity block: `hours` long, starting inside `[start_after, start_before]`
    /// (unix seconds).
    Window {
        /// Length in hours.
        hours: u32,
        /// Earliest start.
        start_after: i64,
        /// Latest start.
        start_before: i64,
    },
    /// One or three years.
    Years {
        /// 1 or 3.
        years: u32,
        /// How it is paid.
        billing: Billing,
    },
    /// Until cancelled, or until `end` (unix seconds) when given.
    UntilCancelled {
        /// The end date, if any.
        end: Option<i64>,
    },
}

/// What destroying the resource does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDestroy {
    /// Cancel the commitment (cancellable kinds only).
    Cancel,
    /// Leave it in the cloud (it still bills) and forget it.
    Forget,
    /// Refuse: a non-cancellable commitment cannot be destroyed.
    Refuse,
}

/// One instance type a commitment could hold, with its on-demand price in the region.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The instance type, as the catalog spells it.
    pub instance_type: String,
    /// GPUs per instance.
    pub gpus_per_instance: u32,
    /// On-demand USD per instance-hour in the region, when the catalog has it.
    pub on_demand_usd_per_hour: Option<f64>,
    /// Where that price came from.
    pub on_demand_origin: PriceOrigin,
}

impl Candidate {
    /// On-demand USD per GPU-hour, when known.
    pub fn on_demand_usd_per_gpu_hour(&self) -> Option<f64> {
        self.on_demand_usd_per_hour
            .map(|p| p / f64::from(self.gpus_per_instance.max(1)))
    }
}

/// A validated commitment.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitmentSpec {
    /// The kind.
    pub kind: CommitmentKind,
    /// Region, as the cloud spells it.
    pub region: String,
    /// Zone, when given.
    pub zone: Option<String>,
    /// The GPU model.
    pub gpu: &'static GpuModel,
    /// The instance types it may hold, cheapest on-demand GPU-hour first; one when pinned.
    pub candidates: Vec<Candidate>,
    /// Instances.
    pub instance_count: u32,
    /// Its length.
    pub term: Term,
    /// What destroy does.
    pub on_destroy: OnDestroy,
}

impl CommitmentSpec {
    /// The cheapest candidate (the one a capacity reservation holds).
    pub fn cheapest(&self) -> &Candidate {
        &self.candidates[0]
    }
}

fn err(attribute: &str, problem: impl Into<String>) -> FieldError {
    FieldError {
        attribute: attribute.to_string(),
        problem: problem.into(),
    }
}

/// Validates `c` against the catalog at time `now` (unix seconds). With `now` `None`
/// (configuration checks, which must hold for a commitment bought long ago too) dates are
/// only parsed, not compared with the clock.
pub fn validate(
    c: &CommitmentConfig,
    catalog: &Catalog,
    now: Option<i64>,
) -> Result<CommitmentSpec, Vec<FieldError>> {
    let mut errors = Vec::new();
    let kind = match c.kind.parse::<CommitmentKind>() {
        Ok(k) if !k.built() => {
            errors.push(err(
                "kind",
                format!(
                    "\"{k}\" is not built yet in this version of the provider: buying on {} \
                     comes in a later release (built today: \"aws_capacity_block\", \
                     \"aws_capacity_reservation\", \"gcp_commitment\", \"gcp_reservation\")",
                    k.cloud()
                ),
            ));
            None
        }
        Ok(k) => Some(k),
        Err(e) => {
            errors.push(err("kind", e.to_string()));
            None
        }
    };
    let cloud = kind.map(CommitmentKind::cloud);
    let region = spelling::region(cloud, &c.region);
    if region.is_empty() {
        errors.push(err("region", "must not be empty: the region to commit in"));
    }
    let zone = c.zone.as_deref().map(|z| z.trim().to_ascii_lowercase());
    if let (Some(k), Some(z)) = (kind, zone.as_deref()) {
        if !k.zonal() {
            errors.push(err("zone", format!("\"{k}\" is regional: remove `zone`")));
        } else if k.cloud() == Cloud::Aws && !is_aws_zone_of(z, &region) {
            errors.push(err(
                "zone",
                format!("\"{z}\" is not a zone of {region}: write it as {region}a, {region}b, …"),
            ));
        } else if k.cloud() == Cloud::Azure && !matches!(z, "1" | "2" | "3") {
            errors.push(err(
                "zone",
                format!("\"{z}\" is not an Azure availability zone: write \"1\", \"2\" or \"3\""),
            ));
        } else if k.cloud() == Cloud::Gcp && !crate::seam::is_zone_of(z, &region) {
            errors.push(err(
                "zone",
                format!("\"{z}\" is not a zone of {region}: write it as {region}-a, {region}-b, …"),
            ));
        }
    }
    if kind == Some(CommitmentKind::GcpReservation) && zone.is_none() {
        errors.push(err(
            "zone",
            "a Compute Engine reservation holds capacity in one zone: set `zone` (e.g. \"us-central1-a\")",
        ));
    }
    if kind == Some(CommitmentKind::GcpCommitment) && zone.is_none() {
        errors.push(err(
            "zone",
            "a Compute Engine commitment to GPUs must attach a reservation, which is zonal: set `zone` (e.g. \"us-central1-a\")",
        ));
    }
    if kind == Some(CommitmentKind::AzureCapacityReservation) && c.end.is_some() {
        errors.push(err(
            "end",
            "an Azure capacity reservation has no end date: remove `end`; destroy deletes it",
        ));
    }
    if kind == Some(CommitmentKind::GcpReservation) && c.end.is_some() {
        errors.push(err(
            "end",
            "an end date on a Compute Engine reservation is not supported yet: remove `end`; destroy deletes the reservation",
        ));
    }
    if kind == Some(CommitmentKind::GcpCommitment)
        && c.billing
            .as_deref()
            .is_some_and(|b| b.trim().eq_ignore_ascii_case("upfront"))
    {
        errors.push(err(
            "billing",
            "Google Cloud bills committed use monthly over the term: remove `billing` or set \"monthly\"",
        ));
    }
    if kind == Some(CommitmentKind::AwsCapacityReservation) && zone.is_none() {
        errors.push(err(
            "zone",
            "an EC2 capacity reservation holds capacity in one zone: set `zone` (e.g. \"us-east-1a\")",
        ));
    }
    if !(1..=MAX_INSTANCES).contains(&c.instance_count) {
        errors.push(err(
            "instance_count",
            format!(
                "is {}: the number of instances to commit to, 1 to {MAX_INSTANCES}",
                c.instance_count
            ),
        ));
    }
    let term = kind.and_then(|k| term(k, c, now, &mut errors));
    let on_destroy = kind.and_then(|k| on_destroy(k, c.on_destroy.as_deref(), &mut errors));
    let choice = match (cloud, region.is_empty()) {
        (Some(cloud), false) => candidates(c, catalog, cloud, &region, &mut errors),
        _ => None,
    };
    match (kind, term, on_destroy, choice) {
        (Some(kind), Some(term), Some(on_destroy), Some((gpu, candidates)))
            if errors.is_empty() =>
        {
            Ok(CommitmentSpec {
                kind,
                region,
                zone,
                gpu,
                candidates,
                instance_count: c.instance_count as u32,
                term,
                on_destroy,
            })
        }
        _ => Err(errors),
    }
}

/// `us-east-1a` is a zone of `us-east-1` (a name; zone ids are not accepted here).
fn is_aws_zone_of(zone: &str, region: &str) -> bool {
    zone.strip_prefix(region)
        .is_some_and(|rest| rest.len() == 1 && rest.chars().all(|ch| ch.is_ascii_lowercase()))
}

fn term(
    kind: CommitmentKind,
    c: &CommitmentConfig,
    now: Option<i64>,
    errors: &mut Vec<FieldError>,
) -> Option<Term> {
    let style = kind.term_style();
    let only = |attr: &str, set: bool, allowed: TermStyle, errors: &mut Vec<FieldError>| {
        if set && style != allowed {
            let who = match allowed {
                TermStyle::Window => "\"aws_capacity_block\"",
                TermStyle::Years => "\"gcp_commitment\" and \"azure_reservation\"",
                TermStyle::UntilCancelled => {
                    "\"aws_capacity_reservation\", \"gcp_reservation\" and \"azure_capacity_reservation\""
                }
            };
            errors.push(err(
                attr,
                format!("applies to {who} only, not to \"{kind}\": remove it"),
            ));
        }
    };
    only(
        "duration_hours",
        c.duration_hours.is_some(),
        TermStyle::Window,
        errors,
    );
    only(
        "start_after",
        c.start_after.is_some(),
        TermStyle::Window,
        errors,
    );
    only(
        "start_before",
        c.start_before.is_some(),
        TermStyle::Window,
        errors,
    );
    only("term", c.term.is_some(), TermStyle::Years, errors);
    only("billing", c.billing.is_some(), TermStyle::Years, errors);
    only("end", c.end.is_some(), TermStyle::UntilCancelled, errors);
    let before = errors.len();
    let t = match style {
        TermStyle::Window => window(c, now, errors),
        TermStyle::Years => years(c, errors),
        TermStyle::UntilCancelled => {
            let end = c.end.as_deref().and_then(|e| match parse_rfc3339(e) {
                Some(t) if now.is_none_or(|n| t > n) => Some(t),
                Some(_) => {
                    errors.push(err("end", format!("\"{e}\" is not in the future")));
                    None
                }
                None => {
                    errors.push(err(
                        "end",
                        format!("\"{e}\" is not a date: write RFC 3339 (2027-01-31T00:00:00Z) or a date (2027-01-31)"),
                    ));
                    None
                }
            });
            Some(Term::UntilCancelled { end })
        }
    };
    (errors.len() == before).then_some(t).flatten()
}

/// Whether EC2 sells capacity blocks this long: 1 to 14 days in whole days, or up to 182
/// days in whole weeks.
pub fn valid_block_hours(hours: i64) -> bool {
    hours > 0
        && hours % 24 == 0
        && (hours <= 14 * 24 || (hours % (7 * 24) == 0 && hours <= 182 * 24))
}

fn window(c: &CommitmentConfig, now: Option<i64>, errors: &mut Vec<FieldError>) -> Option<Term> {
    let hours = match c.duration_hours {
        None => {
            errors.push(err(
                "duration_hours",
                "a capacity block needs its length: 24 to 336 hours in whole days, or up to 4368 in whole weeks",
            ));
            None
        }
        Some(h) if !valid_block_hours(h) => {
            errors.push(err(
                "duration_hours",
                format!("is {h}: capacity blocks last 24 to 336 hours in whole days (24, 48, …), or up to 4368 hours in whole weeks (504, 672, …)"),
            ));
            None
        }
        Some(h) => Some(h as u32),
    };
    let horizon = now.map(|n| n + CAPACITY_BLOCK_HORIZON_SECS);
    let mut date = |attr: &str, v: Option<&str>, default: Option<i64>| match v {
        None => Some(default.unwrap_or(0)),
        Some(s) => match parse_rfc3339(s) {
            Some(t) if horizon.is_some_and(|h| t > h) => {
                errors.push(err(
                    attr,
                    format!("\"{s}\" is more than 8 weeks ahead: capacity blocks can be bought at most 8 weeks before they start"),
                ));
                None
            }
            Some(t) => Some(now.map_or(t, |n| t.max(n))),
            None => {
                errors.push(err(
                    attr,
                    format!("\"{s}\" is not a date: write RFC 3339 (2027-01-31T00:00:00Z) or a date (2027-01-31)"),
                ));
                None
            }
        },
    };
    let after = date("start_after", c.start_after.as_deref(), now);
    let before = date(
        "start_before",
        c.start_before.as_deref(),
        horizon.or(Some(i64::MAX)),
    );
    if let (Some(a), Some(b)) = (after, before)
        && a > b
    {
        errors.push(err(
            "start_before",
            "is earlier than `start_after`: the start window must not be empty",
        ));
        return None;
    }
    Some(Term::Window {
        hours: hours?,
        start_after: after?,
        start_before: before?,
    })
}

fn years(c: &CommitmentConfig, errors: &mut Vec<FieldError>) -> Option<Term> {
    let years = match c.term.as_deref().map(|t| t.trim().to_ascii_lowercase()) {
        Some(t) if t == "1y" => Some(1),
        Some(t) if t == "3y" => Some(3),
        Some(t) => {
            errors.push(err("term", format!("is \"{t}\": write \"1y\" or \"3y\"")));
            None
        }
        None => {
            errors.push(err("term", "is required for this kind: \"1y\" or \"3y\""));
            None
        }
    };
    let billing = match c.billing.as_deref().map(|b| b.trim().to_ascii_lowercase()) {
        None => Some(Billing::Monthly),
        Some(b) if b == "monthly" => Some(Billing::Monthly),
        Some(b) if b == "upfront" => Some(Billing::Upfront),
        Some(b) => {
            errors.push(err(
                "billing",
                format!("is \"{b}\": write \"upfront\" or \"monthly\""),
            ));
            None
        }
    };
    Some(Term::Years {
        years: years?,
        billing: billing?,
    })
}

fn on_destroy(
    kind: CommitmentKind,
    value: Option<&str>,
    errors: &mut Vec<FieldError>,
) -> Option<OnDestroy> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None if kind.cancellable() => Some(OnDestroy::Cancel),
        None => Some(OnDestroy::Refuse),
        Some("forget") => Some(OnDestroy::Forget),
        Some("cancel") if kind.cancellable() => Some(OnDestroy::Cancel),
        Some("cancel") => {
            errors.push(err(
                "on_destroy",
                format!("\"{kind}\" cannot be cancelled once bought: remove `on_destroy`, or set \"forget\" to let destroy leave it billing in the cloud"),
            ));
            None
        }
        Some(v) => {
            errors.push(err(
                "on_destroy",
                format!("is \"{v}\": write \"cancel\" or \"forget\""),
            ));
            None
        }
    }
}

/// The GPU and the instance types `c` asks for, from the catalog's rows of `cloud` in
/// `region`, cheapest on-demand GPU-hour first (unpriced last, then by name).
fn candidates(
    c: &CommitmentConfig,
    catalog: &Catalog,
    cloud: Cloud,
    region: &str,
    errors: &mut Vec<FieldError>,
) -> Option<(&'static GpuModel, Vec<Candidate>)> {
    let in_region = || {
        catalog
            .offers()
            .iter()
            .filter(move |o| o.cloud == cloud && o.region == region)
    };
    let mut by_type: BTreeMap<String, Candidate> = BTreeMap::new();
    let mut gpu_model = None;
    match (&c.instance_type, &c.gpu) {
        (Some(_), Some(_)) => {
            errors.push(err(
                "instance_type",
                "give either `instance_type` or `gpu` (with `gpu_count`), not both",
            ));
            return None;
        }
        (None, None) => {
            errors.push(err(
                "gpu",
                "say what to commit to: `gpu` (with `gpu_count`) or `instance_type`",
            ));
            return None;
        }
        (Some(t), None) => {
            if c.gpu_count.is_some() {
                errors.push(err(
                    "gpu_count",
                    "goes with `gpu`: an `instance_type` already fixes its GPUs",
                ));
            }
            let t = spelling::instance_type(catalog, Some(cloud), t);
            for o in in_region().filter(|o| o.instance_type == t) {
                gpu_model = Some(o.gpu);
                absorb(&mut by_type, o);
            }
            if by_type.is_empty() {
                let known: Vec<String> = in_region()
                    .map(|o| o.instance_type.clone())
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .take(12)
                    .collect();
                errors.push(err(
                    "instance_type",
                    format!(
                        "\"{t}\" is not a GPU type the catalog knows in {region}; GPU types there include: {}",
                        if known.is_empty() { "none (no GPU offers in this region)".to_string() } else { known.join(", ") }
                    ),
                ));
            }
        }
        (None, Some(g)) => {
            let model = match gpu::lookup(g) {
                Ok(m) => m,
                Err(e) => {
                    errors.push(err("gpu", e.to_string()));
                    return None;
                }
            };
            gpu_model = Some(model);
            if let Some(n) = c.gpu_count
                && !(1..=16).contains(&n)
            {
                errors.push(err(
                    "gpu_count",
                    format!("is {n}: GPUs per instance, 1 to 16"),
                ));
                return None;
            }
            for o in in_region().filter(|o| {
                o.gpu.name == model.name
                    && o.gpu_count.is_some_and(|n| n >= 1.0 && n.fract() == 0.0)
                    && c.gpu_count
                        .is_none_or(|want| o.gpu_count == Some(want as f64))
            }) {
                absorb(&mut by_type, o);
            }
            if by_type.is_empty() {
                let counts: std::collections::BTreeSet<u32> = in_region()
                    .filter(|o| o.gpu.name == model.name)
                    .filter_map(|o| o.gpu_count.filter(|n| n.fract() == 0.0).map(|n| n as u32))
                    .collect();
                errors.push(err(
                    if counts.is_empty() {
                        "gpu"
                    } else {
                        "gpu_count"
                    },
                    if counts.is_empty() {
                        format!("the catalog has no {} instances in {region}", model.name)
                    } else {
                        format!(
                            "no {} type in {region} has {} GPUs; it has types with {}",
                            model.name,
                            c.gpu_count.unwrap_or_default(),
                            counts
                                .iter()
                                .map(u32::to_string)
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    },
                ));
            }
        }
    }
    let mut list: Vec<Candidate> = by_type.into_values().collect();
    list.sort_by(|a, b| {
        match (
            a.on_demand_usd_per_gpu_hour(),
            b.on_demand_usd_per_gpu_hour(),
        ) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
        .then_with(|| a.instance_type.cmp(&b.instance_type))
    });
    match gpu_model {
        Some(m) if !list.is_empty() => Some((m, list)),
        _ => None,
    }
}

/// Folds one catalog row into its type's candidate, keeping the cheapest on-demand price.
fn absorb(by_type: &mut BTreeMap<String, Candidate>, o: &crate::offer::Offer) {
    let entry = by_type
        .entry(o.instance_type.clone())
        .or_insert_with(|| Candidate {
            instance_type: o.instance_type.clone(),
            gpus_per_instance: o.gpu_count.map_or(1, |n| n.max(1.0) as u32),
            on_demand_usd_per_hour: None,
            on_demand_origin: PriceOrigin::default(),
        });
    if let Some(p) = o.on_demand_usd_per_hour
        && entry.on_demand_usd_per_hour.is_none_or(|q| p < q)
    {
        entry.on_demand_usd_per_hour = Some(p);
        entry.on_demand_origin = o.on_demand_origin.clone();
    }
}
