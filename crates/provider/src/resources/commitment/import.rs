//! `terraform import gpu_commitment.x <kind>/<location>/<id>`: a commitment that already
//! exists (bought by hand, in a console, or by another state) read into state as its cloud
//! reports it, so that a configuration that says the same plans empty. Import never buys
//! or cancels anything.

use std::collections::BTreeMap;

use gpu_core::catalog::Catalog;
use gpu_core::commitment::{CommitmentKind, LiveCommitment, MARKER_TAG, spec};
use gpu_core::seam::ConnectCommitments as _;
use gpu_core::time::format_rfc3339;
use tfplugin::{Diagnostic, Diagnostics, Value};

use super::plan::set;
use super::{Settings, core_config, schema};
use crate::model_values::object_of;
use gpu_core::seam::is_zone_of;
use gpu_core::seam::region_of_location;

/// The attributes a priced import copies from a plan of the same commitment.
const PRICED: &[&str] = &[
    "gpus",
    "upfront_usd",
    "hourly_usd",
    "monthly_usd",
    "total_usd",
    "effective_usd_per_gpu_hour",
    "on_demand_usd_per_gpu_hour",
    "break_even_utilization",
    "price_source",
];

/// Reads the commitment `id` names from its cloud into state, priced where the price is
/// the catalog's or a published rate; every refusal names the id's form.
pub async fn import(id: &str, settings: &Settings) -> Result<Value, Diagnostics> {
    let id = ImportId::parse(id)
        .map_err(|why| Diagnostics::from(Diagnostic::error("Invalid import id", why)))?;
    let cloud = id.kind.cloud();
    let store = settings
        .clouds
        .commitments(cloud, &id.region())
        .await
        .map_err(|e| {
            Diagnostics::from(Diagnostic::error(
                format!("Cannot connect to {cloud}"),
                e.to_string(),
            ))
        })?;
    let found = if id.kind == CommitmentKind::AzureCapacityReservation {
        // Its key is the marker form `<resource group>/<group>/<name>`.
        store
            .find_by_marker(&id.location, &id.key)
            .await
            .map(|all| all.into_iter().next())
    } else {
        store.get(&id.location, &id.key).await
    };
    let cannot =
        |why: String| Diagnostics::from(Diagnostic::error("Cannot import the commitment", why));
    let live = match found {
        Ok(Some(live)) => live,
        Ok(None) => {
            return Err(cannot(format!(
                "{cloud} has no {} {:?} in {}: check the id and the location (the provider's credentials read {cloud} as usual).",
                id.kind, id.key, id.location
            )));
        }
        Err(e) => return Err(cannot(format!("{}: {e}", id.key))),
    };
    if live.kind != id.kind {
        return Err(cannot(format!(
            "{} is a {}, not a {}: import it as `{}/{}/{}`.",
            id.key, live.kind, id.kind, live.kind, id.location, id.key
        )));
    }
    let mut state = state_of(&live, &id, &settings.default_labels);
    price(&mut state, &id, settings).await;
    super::usage::record(&mut state, live.in_use.as_ref());
    Ok(state)
}

/// Prices an imported commitment as a plan of the same configuration would: kinds billed
/// at the catalog's on-demand rate or a published committed-use rate. A capacity block's
/// fee and an Azure reservation's price were the cloud's at purchase and are not read
/// back: those stay null, and `price_source` says so.
async fn price(state: &mut Value, id: &ImportId, settings: &Settings) {
    let catalog = Catalog::embedded();
    let priced_by_catalog = matches!(
        id.kind,
        CommitmentKind::AwsCapacityReservation
            | CommitmentKind::GcpReservation
            | CommitmentKind::GcpCommitment
            | CommitmentKind::AzureCapacityReservation
    );
    // The configuration that buys it: `end` is an input of EC2 reservations only.
    let mut config = state.clone();
    if id.kind != CommitmentKind::AwsCapacityReservation {
        set(&mut config, "end", Value::Null);
    }
    if priced_by_catalog {
        let planned =
            super::plan::plan_create(&config, &config, settings, catalog, &settings.clouds).await;
        for name in PRICED {
            if let Some(v) = planned
                .planned_state
                .get_attr(name)
                .filter(|v| v.is_known())
            {
                set(state, name, v.clone());
            }
        }
        return;
    }
    if let Ok(spec) = spec::validate(&core_config(&config), catalog, None) {
        let gpus = spec.instance_count * spec.cheapest().gpus_per_instance;
        set(state, "gpus", Value::number(gpus));
    }
    let why = match id.kind {
        CommitmentKind::AwsCapacityBlock => {
            "imported: the upfront fee EC2 charged is not read back (DescribeCapacityReservations has no price)"
        }
        _ => "imported: the price Azure charged is not read back",
    };
    set(state, "price_source", Value::string(why));
}

/// The forms of the import id, one line per kind.
pub const FORMS: &str = "`aws_capacity_block/<region>/<cr-id>`, \
`aws_capacity_reservation/<region>/<cr-id>`, `gcp_reservation/<zone>/<name>`, \
`gcp_commitment/<region>/<name>`, `azure_reservation/<region>/<reservation order id>`, \
`azure_capacity_reservation/<region>/<resource group>/<group>/<name>`";

/// An import id taken apart.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportId {
    /// The commitment's kind.
    pub kind: CommitmentKind,
    /// Where the cloud addresses it: a region, or a zone for `gcp_reservation`.
    pub location: String,
    /// Its id there (Azure capacity reservations: `<resource group>/<group>/<name>`).
    pub key: String,
}

impl ImportId {
    /// Parses `<kind>/<location>/<id>`; the error says which forms are valid.
    pub fn parse(id: &str) -> Result<Self, String> {
        let bad = |why: String| format!("{why}. Write the import id as one of {FORMS}.");
        let mut parts = id.trim().splitn(3, '/');
        let (kind, location, key) = match (parts.next(), parts.next(), parts.next()) {
            (Some(k), Some(l), Some(i)) if !k.is_empty() && !l.is_empty() && !i.is_empty() => {
                (k, l, i)
            }
            _ => return Err(bad(format!("{id:?} is not `<kind>/<location>/<id>`"))),
        };
        let kind = kind
            .parse::<CommitmentKind>()
            .map_err(|e| bad(format!("{e}")))?;
        let location = location.trim().to_ascii_lowercase();
        let segments = key.split('/').filter(|s| !s.is_empty()).count();
        let want = if kind == CommitmentKind::AzureCapacityReservation {
            3
        } else {
            1
        };
        if segments != want || key.split('/').count() != want {
            return Err(bad(format!(
                "{key:?} is not the id of a {kind} (it has {want} part{})",
                if want == 1 { "" } else { "s" }
            )));
        }
        if kind == CommitmentKind::GcpReservation && !is_zone(&location) {
            return Err(bad(format!(
                "{location:?} is not a zone: a Compute Engine reservation is zonal (`us-central1-a`)"
            )));
        }
        Ok(ImportId {
            kind,
            location,
            key: key.to_string(),
        })
    }

    /// The region: the location, or a zone's region.
    pub fn region(&self) -> String {
        if self.kind == CommitmentKind::GcpReservation {
            region_of_location(&self.location)
        } else {
            self.location.clone()
        }
    }
}

/// Zones look like `us-central1-a`: a letter after their region.
fn is_zone(l: &str) -> bool {
    is_zone_of(l, &region_of_location(l))
}

/// The state of `live`, imported as `id`: what the cloud says, in the attributes a
/// configuration writes, and null where the configuration's default means the same (so a
/// configuration that leaves a default out plans empty). `default_labels` are the
/// provider's, left out of `tags` as a purchase leaves them out.
pub fn state_of(
    live: &LiveCommitment,
    id: &ImportId,
    default_labels: &BTreeMap<String, String>,
) -> Value {
    let text = |s: &str| Value::string(s);
    let opt_text = |s: Option<&str>| {
        s.filter(|s| !s.is_empty())
            .map_or(Value::Null, Value::string)
    };
    let mut pairs: Vec<(&str, Value)> = vec![
        ("id", text(&live.id)),
        ("commitment_id", text(&live.id)),
        ("kind", text(id.kind.as_str())),
        ("region", text(&id.region())),
        ("zone", opt_text(live.zone.as_deref())),
        ("instance_type", opt_text(Some(&live.instance_type))),
        ("instance_count", Value::number(live.instance_count)),
        ("status", text(live.status.as_str())),
        (
            "start",
            live.start.map_or(Value::Null, |s| text(&format_rfc3339(s))),
        ),
        (
            "end",
            live.end.map_or(Value::Null, |e| text(&format_rfc3339(e))),
        ),
        ("tags", tags_value(&live.tags, default_labels)),
    ];
    if id.kind == CommitmentKind::AwsCapacityBlock
        && let (Some(start), Some(end)) = (live.start, live.end)
    {
        pairs.push(("duration_hours", Value::number((end - start) / 3600)));
    }
    if let Some(years) = live.term_years {
        pairs.push(("term", text(&format!("{years}y"))));
    }
    // `monthly` is the default of an Azure reservation: written only when it is not.
    if id.kind == CommitmentKind::AzureReservation
        && live.billing_plan.as_deref() == Some("upfront")
    {
        pairs.push(("billing", text("upfront")));
    }
    if id.kind.cloud() == gpu_core::offer::Cloud::Aws {
        pairs.push(("aws", aws_block(live)));
    }
    if id.kind == CommitmentKind::AzureCapacityReservation {
        let group = id.key.split('/').next().unwrap_or_default();
        pairs.push((
            "azure",
            Value::object([("resource_group", Value::string(group))]),
        ));
    }
    object_of(&schema(), pairs)
}

/// The `aws` block: null when the platform and match criteria are the defaults. A
/// capacity block is always `targeted`, which no configuration writes.
fn aws_block(live: &LiveCommitment) -> Value {
    let platform = live
        .platform
        .as_deref()
        .filter(|p| !p.eq_ignore_ascii_case("Linux/UNIX"));
    let criteria = live
        .match_criteria
        .as_deref()
        .filter(|c| !c.eq_ignore_ascii_case("open"))
        .filter(|_| live.kind == CommitmentKind::AwsCapacityReservation);
    if platform.is_none() && criteria.is_none() {
        return Value::Null;
    }
    let v = |s: Option<&str>| s.map_or(Value::Null, Value::string);
    Value::object([
        ("instance_platform", v(platform)),
        ("instance_match_criteria", v(criteria)),
    ])
}

/// The cloud's tags without the purchase marker and the provider's `default_labels`
/// (where the value is the default's); null when none is left.
fn tags_value(tags: &BTreeMap<String, String>, default_labels: &BTreeMap<String, String>) -> Value {
    let own: Vec<(&String, &String)> = tags
        .iter()
        .filter(|(k, v)| k.as_str() != MARKER_TAG && default_labels.get(*k) != Some(*v))
        .collect();
    if own.is_empty() {
        return Value::Null;
    }
    Value::map(own.into_iter().map(|(k, v)| (k.as_str(), Value::string(v))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_core::commitment::CommitmentStatus;

    fn live(kind: CommitmentKind) -> LiveCommitment {
        LiveCommitment {
            id: "cr-0123456789abcdef0".into(),
            kind,
            status: CommitmentStatus::Active,
            cloud_state: "active".into(),
            zone: Some("us-east-1b".into()),
            instance_type: "p5.48xlarge".into(),
            instance_count: 2,
            start: Some(1_767_225_600),
            end: Some(1_767_225_600 + 48 * 3600),
            tags: [
                (MARKER_TAG, "gc-1"),
                ("team", "ml"),
                ("purpose", "training"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into(),
            in_use: None,
            term_years: None,
            billing_plan: None,
            platform: Some("Linux/UNIX".into()),
            match_criteria: Some("open".into()),
        }
    }

    #[test]
    fn ids_parse_per_kind_and_a_bad_one_lists_the_forms() {
        let id = ImportId::parse("aws_capacity_block/US-EAST-1/cr-0123").unwrap();
        assert_eq!(
            (id.kind, id.location.as_str(), id.key.as_str()),
            (CommitmentKind::AwsCapacityBlock, "us-east-1", "cr-0123")
        );
        let r = ImportId::parse("gcp_reservation/us-central1-b/gpu-tf-1").unwrap();
        assert_eq!(r.region(), "us-central1");
        let c = ImportId::parse("azure_capacity_reservation/eastus/rg-gpu/grp/res").unwrap();
        assert_eq!(c.key, "rg-gpu/grp/res");
        for bad in [
            "cr-0123",
            "aws_capacity_block/us-east-1/",
            "nvidia_block/us-east-1/cr-1",
            "gcp_reservation/us-central1/gpu-tf-1",
            "azure_capacity_reservation/eastus/res",
            "aws_capacity_block/us-east-1/a/b",
        ] {
            let e = ImportId::parse(bad).unwrap_err();
            assert!(e.contains("gcp_commitment/<region>/<name>"), "{bad}: {e}");
        }
    }

    #[test]
    fn state_holds_what_the_cloud_says_and_leaves_defaults_null() {
        let id = ImportId::parse("aws_capacity_block/us-east-1/cr-0123456789abcdef0").unwrap();
        let labels: BTreeMap<String, String> = [("team".to_string(), "ml".to_string())].into();
        let s = state_of(&live(CommitmentKind::AwsCapacityBlock), &id, &labels);
        let get = |k: &str| s.get_attr(k).cloned().unwrap();
        assert_eq!(get("kind"), Value::string("aws_capacity_block"));
        assert_eq!(get("duration_hours"), Value::number(48));
        assert_eq!(get("instance_count"), Value::number(2));
        assert_eq!(get("aws"), Value::Null, "default platform and criteria");
        assert_eq!(
            get("tags"),
            Value::map([("purpose", Value::string("training"))]),
            "no marker, no default label"
        );
        assert_eq!(get("on_destroy"), Value::Null);
        let mut windows = live(CommitmentKind::AwsCapacityReservation);
        windows.platform = Some("Windows".into());
        let s = state_of(&windows, &id, &labels);
        let aws = s.get_attr("aws").unwrap();
        assert_eq!(
            aws.get_attr("instance_platform"),
            Some(&Value::string("Windows"))
        );
        assert_eq!(aws.get_attr("instance_match_criteria"), Some(&Value::Null));
    }
}
