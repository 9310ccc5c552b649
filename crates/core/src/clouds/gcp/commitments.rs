//! Compute Engine zonal reservations and regional committed use discounts over the
//! Compute API v1 REST: [`ComputeCommitments`] implements [`Commitments`].
//!
//! Calls: `reservations.insert` / `get` / `delete` (`projects/{p}/zones/{z}/reservations`)
//! and `regionCommitments.insert` / `get` (`projects/{p}/regions/{r}/commitments`; there is
//! no delete: a commitment cannot be cancelled). Every insert and delete answers a
//! `compute#operation`, polled (`zoneOperations.get` / `regionOperations.get`) until `DONE`;
//! one that ends with `error.errors[]` becomes its typed error (a stockout is insufficient
//! capacity, an exceeded quota a quota). Inserts carry a `requestId` (a UUID) that stays
//! the same across retries, so a repeat after a lost answer does not act twice; the
//! resource's name is the purchase's marker (Compute has no labels on either).

use std::collections::{BTreeMap, hash_map::RandomState};
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::rest::Rest;
use crate::cancel::Cancel;
use crate::seam::CloudError;
use crate::seam::commitment_kind::CommitmentKind;
use crate::seam::commitments::{
    CommitmentStatus, CommitmentUse, Commitments, LiveCommitment, Order,
};
use crate::seam::poll::{self, Backoff};
use crate::time::parse_rfc3339;

/// Compute Engine commitments of one project.
#[derive(Debug, Clone)]
pub struct ComputeCommitments {
    pub(super) rest: Rest,
    pub(super) project: String,
    backoff: Backoff,
    operation_timeout: Duration,
    cancel: Cancel,
}

/// A `compute#operation` (the fields used).
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct Operation {
    pub(super) name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    error: Option<OperationErrors>,
}

#[derive(Debug, Deserialize, Default)]
pub(super) struct OperationErrors {
    #[serde(default)]
    errors: Vec<OperationError>,
}

#[derive(Debug, Deserialize, Default)]
pub(super) struct OperationError {
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
}

/// What a failed operation's first error means.
pub(super) fn operation_error(what: &str, e: &OperationError) -> CloudError {
    let text = format!("{what} failed: {}: {}", e.code, e.message);
    if let Some(outcome) = super::codes::capacity_in(&e.code, &e.message) {
        super::codes::capacity_error(outcome, text)
    } else if e.code == "RESOURCE_ALREADY_EXISTS" || e.code == "ALREADY_EXISTS" {
        CloudError::Conflict(text)
    } else if e.code.starts_with("INVALID") || e.code == "BAD_REQUEST" {
        CloudError::Invalid(text)
    } else {
        CloudError::Other(text)
    }
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Reservation {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    zone: String,
    #[serde(default)]
    creation_timestamp: Option<String>,
    #[serde(default)]
    specific_reservation: Option<SpecificReservation>,
}

#[derive(Debug, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SpecificReservation {
    #[serde(default, with = "int64_string")]
    count: u64,
    /// Instances running in it (read only; an int64 as a JSON string). Absent: unknown.
    #[serde(default, skip_serializing, deserialize_with = "int64_string::optional")]
    in_use_count: Option<u64>,
    #[serde(default)]
    instance_properties: InstanceProperties,
}

#[derive(Debug, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct InstanceProperties {
    #[serde(default)]
    machine_type: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    guest_accelerators: Vec<Accelerator>,
}

#[derive(Debug, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Accelerator {
    accelerator_type: String,
    accelerator_count: u32,
}

/// A page of `regionCommitments.list`.
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CommitmentList {
    #[serde(default)]
    items: Vec<Commitment>,
    #[serde(default)]
    next_page_token: Option<String>,
}

/// A page of `reservations.aggregatedList`: each scope's (`zones/<zone>`) reservations.
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ReservationAggregatedList {
    #[serde(default)]
    items: BTreeMap<String, ReservationsScoped>,
    #[serde(default)]
    next_page_token: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
struct ReservationsScoped {
    #[serde(default)]
    reservations: Vec<Reservation>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ReservationInsert<'a> {
    name: &'a str,
    description: String,
    specific_reservation: SpecificReservation,
    specific_reservation_required: bool,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Commitment {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    start_timestamp: Option<String>,
    #[serde(default)]
    end_timestamp: Option<String>,
    /// `TWELVE_MONTH` or `THIRTY_SIX_MONTH`.
    #[serde(default)]
    plan: String,
    /// The reservations created with it (a GPU commitment needs one).
    #[serde(default)]
    reservations: Vec<Reservation>,
}

#[derive(Debug, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CommitmentResource {
    #[serde(rename = "type")]
    kind: String,
    #[serde(with = "int64_string")]
    amount: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    accelerator_type: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CommitmentInsert<'a> {
    name: &'a str,
    description: String,
    plan: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    category: &'static str,
    resources: Vec<CommitmentResource>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    reservations: Vec<AttachedReservation>,
}

/// A reservation created with a commitment (Compute requires one for GPUs).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AttachedReservation {
    name: String,
    zone: String,
    specific_reservation: SpecificReservation,
    specific_reservation_required: bool,
}

/// int64 fields travel as JSON strings (and are accepted as numbers).
pub(super) mod int64_string {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            S(String),
            N(u64),
        }
        match Either::deserialize(d)? {
            Either::N(n) => Ok(n),
            Either::S(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }

    /// An int64 that may be absent (with `default`) or null.
    pub fn optional<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        #[derive(Deserialize)]
        struct Wrapped(#[serde(deserialize_with = "deserialize")] u64);
        Ok(Option::<Wrapped>::deserialize(d)?.map(|w| w.0))
    }
}

/// A version-4 UUID from the process's random hasher seeds (a `requestId`).
pub(super) fn request_id() -> String {
    let mut words = [0u64; 2];
    for (i, w) in words.iter_mut().enumerate() {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(crate::time::unix_now());
        h.write_usize(i);
        *w = h.finish();
    }
    let b: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    let hex: String = b
        .iter()
        .enumerate()
        .map(|(i, x)| match i {
            6 => format!("{:02x}", (x & 0x0f) | 0x40),
            8 => format!("{:02x}", (x & 0x3f) | 0x80),
            _ => format!("{x:02x}"),
        })
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The last path segment of a Compute URL (`.../zones/us-central1-a` → `us-central1-a`).
fn last_segment(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or(url)
}

/// `name` when it is a legal Compute resource name (so it is safe in a URL path).
pub(super) fn checked(name: &str) -> Result<&str, CloudError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-');
    if ok {
        Ok(name)
    } else {
        Err(CloudError::Invalid(format!(
            "{name:?} is not a legal Compute Engine name (RFC 1035: 1-63 lower-case letters, digits and hyphens)"
        )))
    }
}

/// A zone (`us-central1-a`) or region (`us-central1`) as a path segment.
fn location(l: &str) -> Result<&str, CloudError> {
    checked(l)
}

impl ComputeCommitments {
    /// `project`, trimmed, when it is a legal project id.
    pub(super) fn checked_project(project: &str) -> Result<String, CloudError> {
        let project = project.trim().to_string();
        if project.is_empty()
            || !project.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == ':' || c == '.'
            })
        {
            return Err(CloudError::Invalid(format!(
                "{project:?} is not a Google Cloud project id"
            )));
        }
        Ok(project)
    }

    /// A client of `project` over `rest` (made by [`super::GcpSession`]); no request is made.
    pub(super) fn new(
        rest: Rest,
        project: String,
        backoff: Backoff,
        operation_timeout: Duration,
        cancel: &Cancel,
    ) -> Self {
        ComputeCommitments {
            rest,
            project,
            backoff,
            operation_timeout,
            cancel: cancel.clone(),
        }
    }

    /// Polls operation `op` under `scope` (`zones/z` or `regions/r`) until `DONE`.
    pub(super) async fn wait(
        &self,
        scope: &str,
        op: Operation,
        what: &str,
    ) -> Result<(), CloudError> {
        let path = format!(
            "projects/{}/{scope}/operations/{}",
            self.project,
            checked(&op.name).unwrap_or(&op.name)
        );
        let mut first = Some(op);
        poll::until(
            self.rest.pace(),
            self.backoff,
            self.operation_timeout,
            &self.cancel,
            what,
            || {
                let known = first.take();
                let path = path.clone();
                async move {
                    let o = match known {
                        Some(o) => o,
                        None => self.rest.get("operations.get", &path).await?,
                    };
                    if o.status != "DONE" {
                        return Ok(None);
                    }
                    match o.error.as_ref().and_then(|e| e.errors.first()) {
                        Some(e) => Err(operation_error(what, e)),
                        None => Ok(Some(())),
                    }
                }
            },
        )
        .await
    }

    async fn reservation(
        &self,
        zone: &str,
        name: &str,
    ) -> Result<Option<LiveCommitment>, CloudError> {
        let path = format!(
            "projects/{}/zones/{}/reservations/{}",
            self.project,
            location(zone)?,
            checked(name)?
        );
        match self
            .rest
            .get::<Reservation>("reservations.get", &path)
            .await
        {
            Ok(r) => Ok(Some(reservation_live(&r, zone))),
            Err(CloudError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every reservation in the zones of `region` (`reservations.aggregatedList`, every
    /// page), as commitments.
    async fn reservations_in(&self, region: &str) -> Result<Vec<LiveCommitment>, CloudError> {
        let prefix = format!("zones/{}-", location(region)?);
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut path = format!("projects/{}/aggregated/reservations", self.project);
            if let Some(t) = &token {
                path.push_str(&format!("?pageToken={t}"));
            }
            let page: ReservationAggregatedList =
                self.rest.get("reservations.aggregatedList", &path).await?;
            for (scope, list) in &page.items {
                if let Some(zone) = scope.strip_prefix("zones/")
                    && scope.starts_with(&prefix)
                {
                    out.extend(list.reservations.iter().map(|r| reservation_live(r, zone)));
                }
            }
            match page.next_page_token.filter(|t| !t.is_empty()) {
                Some(t) if token.as_deref() != Some(t.as_str()) => token = Some(t),
                _ => return Ok(out),
            }
        }
    }

    /// Every committed use discount of `region` (`regionCommitments.list`, every page),
    /// and the names of the reservations they attach.
    async fn commitments_in(
        &self,
        region: &str,
    ) -> Result<(Vec<LiveCommitment>, Vec<String>), CloudError> {
        let mut out = Vec::new();
        let mut attached = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut path = format!(
                "projects/{}/regions/{}/commitments",
                self.project,
                location(region)?
            );
            if let Some(t) = &token {
                path.push_str(&format!("?pageToken={t}"));
            }
            let page: CommitmentList = self.rest.get("regionCommitments.list", &path).await?;
            out.extend(page.items.iter().map(commitment_live));
            attached.extend(
                page.items
                    .iter()
                    .flat_map(|c| c.reservations.iter().map(|r| r.name.clone())),
            );
            match page.next_page_token.filter(|t| !t.is_empty()) {
                Some(t) if token.as_deref() != Some(t.as_str()) => token = Some(t),
                _ => return Ok((out, attached)),
            }
        }
    }

    async fn commitment(
        &self,
        region: &str,
        name: &str,
    ) -> Result<Option<LiveCommitment>, CloudError> {
        let path = format!(
            "projects/{}/regions/{}/commitments/{}",
            self.project,
            location(region)?,
            checked(name)?
        );
        match self
            .rest
            .get::<Commitment>("regionCommitments.get", &path)
            .await
        {
            Ok(c) => Ok(Some(commitment_live(&c))),
            Err(CloudError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Zones look like `us-central1-a`; regions like `us-central1`.
fn is_zone(l: &str) -> bool {
    l.rsplit_once('-')
        .is_some_and(|(_, z)| z.len() == 1 && z.chars().all(|c| c.is_ascii_lowercase()))
}

fn reservation_live(r: &Reservation, zone: &str) -> LiveCommitment {
    let status = match r.status.as_str() {
        "READY" => CommitmentStatus::Active,
        "DELETING" => CommitmentStatus::Cancelled,
        "INVALID" => CommitmentStatus::Failed,
        _ => CommitmentStatus::Scheduled, // CREATING, UPDATING
    };
    let spec = r.specific_reservation.as_ref();
    LiveCommitment {
        id: r.name.clone(),
        kind: CommitmentKind::GcpReservation,
        status,
        cloud_state: r.status.clone(),
        zone: Some(if r.zone.is_empty() {
            zone.to_string()
        } else {
            last_segment(&r.zone).to_string()
        }),
        instance_type: spec
            .map(|s| last_segment(&s.instance_properties.machine_type).to_string())
            .unwrap_or_default(),
        instance_count: spec.map_or(0, |s| s.count as u32),
        start: r.creation_timestamp.as_deref().and_then(parse_rfc3339),
        end: None,
        tags: tags_of(&r.description),
        in_use: reservations_use(std::slice::from_ref(r)),
        term_years: None,
        billing_plan: None,
        platform: None,
        match_criteria: None,
    }
}

fn commitment_live(c: &Commitment) -> LiveCommitment {
    let status = match c.status.as_str() {
        "ACTIVE" => CommitmentStatus::Active,
        "EXPIRED" => CommitmentStatus::Expired,
        "CANCELED" | "CANCELLED" => CommitmentStatus::Cancelled,
        _ => CommitmentStatus::Scheduled, // NOT_YET_ACTIVE, CREATING
    };
    // A GPU commitment attaches a reservation of its machines: their type, count and
    // zone are the commitment's (without one, only its resources are known).
    let first = c.reservations.first();
    let spec = first.and_then(|r| r.specific_reservation.as_ref());
    LiveCommitment {
        id: c.name.clone(),
        kind: CommitmentKind::GcpCommitment,
        status,
        cloud_state: c.status.clone(),
        zone: first
            .filter(|r| !r.zone.is_empty())
            .map(|r| last_segment(&r.zone).to_string()),
        instance_type: spec
            .map(|s| last_segment(&s.instance_properties.machine_type).to_string())
            .unwrap_or_default(),
        instance_count: c
            .reservations
            .iter()
            .filter_map(|r| r.specific_reservation.as_ref())
            .map(|s| s.count as u32)
            .sum(),
        start: c.start_timestamp.as_deref().and_then(parse_rfc3339),
        end: c.end_timestamp.as_deref().and_then(parse_rfc3339),
        tags: tags_of(&c.description),
        in_use: reservations_use(&c.reservations),
        term_years: match c.plan.as_str() {
            "TWELVE_MONTH" => Some(1),
            "THIRTY_SIX_MONTH" => Some(3),
            _ => None,
        },
        billing_plan: None,
        platform: None,
        match_criteria: None,
    }
}

/// What runs in `reservations` (`inUseCount` of `count`, summed); `None` when there are
/// none or one lacks its count: a commitment without a reservation is a discount on
/// whatever runs in the region, and only the bill says how much of it was used.
fn reservations_use(reservations: &[Reservation]) -> Option<CommitmentUse> {
    let mut used = 0u64;
    let mut held = 0u64;
    for r in reservations {
        let spec = r.specific_reservation.as_ref()?;
        used += spec.in_use_count?;
        held += spec.count;
    }
    CommitmentUse::counted(
        u32::try_from(used).unwrap_or(u32::MAX),
        u32::try_from(held).ok()?,
    )
}

/// The start of the description of what the provider buys (Compute commitments and
/// reservations have no labels, so the tags go there).
const BOUGHT_BY: &str = "Bought by terraform-provider-gpu. ";

fn description(tags: &BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{BOUGHT_BY}{}", pairs.join(", "))
}

/// The tags [`description`] wrote; none for a description the provider did not write.
fn tags_of(description: &str) -> BTreeMap<String, String> {
    description
        .strip_prefix(BOUGHT_BY)
        .map(|pairs| {
            pairs
                .split(", ")
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

#[async_trait]
impl Commitments for ComputeCommitments {
    async fn purchase(
        &self,
        order: &Order,
        tags: &BTreeMap<String, String>,
    ) -> Result<LiveCommitment, CloudError> {
        match order {
            Order::GcpReservation {
                zone,
                name,
                machine_type,
                count,
                accelerator,
            } => {
                let body = ReservationInsert {
                    name: checked(name)?,
                    description: description(tags),
                    specific_reservation: SpecificReservation {
                        count: u64::from(*count),
                        in_use_count: None,
                        instance_properties: InstanceProperties {
                            machine_type: machine_type.clone(),
                            guest_accelerators: accelerator
                                .iter()
                                .map(|(t, n)| Accelerator {
                                    accelerator_type: t.clone(),
                                    accelerator_count: *n,
                                })
                                .collect(),
                        },
                    },
                    specific_reservation_required: false,
                };
                let path = format!(
                    "projects/{}/zones/{}/reservations?requestId={}",
                    self.project,
                    location(zone)?,
                    request_id()
                );
                let op: Result<Operation, _> = self
                    .rest
                    .call(
                        "reservations.insert",
                        reqwest::Method::POST,
                        &path,
                        Some(&body),
                    )
                    .await;
                match op {
                    Ok(op) => {
                        self.wait(
                            &format!("zones/{zone}"),
                            op,
                            &format!("creating reservation {name} in {zone}"),
                        )
                        .await?
                    }
                    Err(CloudError::Conflict(_)) => {} // it exists: read it below
                    Err(e) => return Err(e),
                }
                self.reservation(zone, name).await?.ok_or_else(|| {
                    CloudError::Other(format!("reservation {name} is not there after its insert"))
                })
            }
            Order::GcpCommitment {
                region,
                name,
                plan,
                commitment_type,
                vcpus,
                memory_mb,
                accelerator,
                reservation,
            } => {
                let mut resources = vec![
                    CommitmentResource {
                        kind: "VCPU".into(),
                        amount: u64::from(*vcpus),
                        accelerator_type: None,
                    },
                    CommitmentResource {
                        kind: "MEMORY".into(),
                        amount: *memory_mb,
                        accelerator_type: None,
                    },
                ];
                if let Some((t, n)) = accelerator {
                    resources.push(CommitmentResource {
                        kind: "ACCELERATOR".into(),
                        amount: u64::from(*n),
                        accelerator_type: Some(t.clone()),
                    });
                }
                let reservations = reservation
                    .iter()
                    .map(|(zone, machine_type, count)| {
                        Ok(AttachedReservation {
                            name: format!("{}-r", checked(name)?),
                            zone: location(zone)?.to_string(),
                            specific_reservation: SpecificReservation {
                                count: u64::from(*count),
                                in_use_count: None,
                                instance_properties: InstanceProperties {
                                    machine_type: machine_type.clone(),
                                    guest_accelerators: Vec::new(),
                                },
                            },
                            specific_reservation_required: false,
                        })
                    })
                    .collect::<Result<Vec<_>, CloudError>>()?;
                let body = CommitmentInsert {
                    name: checked(name)?,
                    description: description(tags),
                    plan,
                    kind: commitment_type,
                    category: "MACHINE",
                    resources,
                    reservations,
                };
                let path = format!(
                    "projects/{}/regions/{}/commitments?requestId={}",
                    self.project,
                    location(region)?,
                    request_id()
                );
                let op: Result<Operation, _> = self
                    .rest
                    .call(
                        "regionCommitments.insert",
                        reqwest::Method::POST,
                        &path,
                        Some(&body),
                    )
                    .await;
                match op {
                    Ok(op) => {
                        self.wait(
                            &format!("regions/{region}"),
                            op,
                            &format!("creating commitment {name} in {region}"),
                        )
                        .await?
                    }
                    Err(CloudError::Conflict(_)) => {}
                    Err(e) => return Err(e),
                }
                self.commitment(region, name).await?.ok_or_else(|| {
                    CloudError::Other(format!("commitment {name} is not there after its insert"))
                })
            }
            _ => Err(CloudError::Invalid(
                "an EC2 order cannot be placed on Compute Engine".into(),
            )),
        }
    }

    async fn get(&self, location: &str, id: &str) -> Result<Option<LiveCommitment>, CloudError> {
        if is_zone(location) {
            self.reservation(location, id).await
        } else {
            self.commitment(location, id).await
        }
    }

    async fn find_by_marker(
        &self,
        location: &str,
        key: &str,
    ) -> Result<Vec<LiveCommitment>, CloudError> {
        Ok(self.get(location, key).await?.into_iter().collect())
    }

    async fn list(&self, region: &str) -> Result<Vec<LiveCommitment>, CloudError> {
        let (mut all, attached) = self.commitments_in(region).await?;
        // A commitment's own reservations are listed with it, not again on their own.
        all.extend(
            self.reservations_in(region)
                .await?
                .into_iter()
                .filter(|r| !attached.contains(&r.id)),
        );
        Ok(all)
    }

    async fn cancel(&self, location: &str, id: &str) -> Result<(), CloudError> {
        if !is_zone(location) {
            return Err(CloudError::Invalid(format!(
                "commitment {id} cannot be cancelled: Compute Engine commitments run to their end"
            )));
        }
        let path = format!(
            "projects/{}/zones/{}/reservations/{}?requestId={}",
            self.project,
            location,
            checked(id)?,
            request_id()
        );
        let op: Operation = match self
            .rest
            .call(
                "reservations.delete",
                reqwest::Method::DELETE,
                &path,
                None::<&()>,
            )
            .await
        {
            Ok(op) => op,
            Err(CloudError::NotFound(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        self.wait(
            &format!("zones/{location}"),
            op,
            &format!("deleting reservation {id} in {location}"),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_read_back_from_the_description_the_provider_wrote() {
        let tags: BTreeMap<String, String> = [("gpu.tf/commitment", "gpu-tf-1"), ("team", "ml")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into();
        assert_eq!(tags_of(&description(&tags)), tags);
        assert!(tags_of("someone else's reservation").is_empty());
    }

    #[test]
    fn use_is_the_reservations_in_use_count_and_unknown_without_one() {
        let r: Reservation = serde_json::from_value(serde_json::json!({"name": "r",
            "specificReservation": {"count": "4", "inUseCount": "3",
            "instanceProperties": {"machineType": "a3-highgpu-8g"}}}))
        .unwrap();
        let live = reservation_live(&r, "us-central1-a");
        let u = live.in_use.unwrap();
        assert_eq!((u.used_instances, u.utilization), (3, 0.75));
        let c: Commitment = serde_json::from_value(serde_json::json!({"name": "c",
            "reservations": [{"name": "c-r", "specificReservation": {"count": "2",
            "inUseCount": "1"}}]}))
        .unwrap();
        assert_eq!(commitment_live(&c).in_use.unwrap().used_instances, 1);
        let bare: Commitment = serde_json::from_value(serde_json::json!({"name": "c"})).unwrap();
        assert_eq!(commitment_live(&bare).in_use, None, "only the bill says");
        let unread: Reservation = serde_json::from_value(serde_json::json!({"name": "r",
            "specificReservation": {"count": "4"}}))
        .unwrap();
        assert_eq!(reservation_live(&unread, "us-central1-a").in_use, None);
    }

    #[test]
    fn request_ids_are_v4_uuids_and_differ() {
        let (a, b) = (request_id(), request_id());
        assert_ne!(a, b);
        let groups: Vec<&str> = a.split('-').collect();
        assert_eq!(
            groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(groups[2].starts_with('4'), "{a}");
        assert!("89ab".contains(&groups[3][..1]), "{a}");
    }

    #[test]
    fn names_zones_and_statuses() {
        assert!(checked("gpu-tf-0123456789abcdef").is_ok());
        assert!(checked("Bad_Name").is_err() && checked("a/../b").is_err());
        assert!(is_zone("us-central1-a") && !is_zone("us-central1"));
        let c: Commitment = serde_json::from_value(serde_json::json!({
            "name": "c", "status": "NOT_YET_ACTIVE",
            "startTimestamp": "2027-01-01T00:00:00.000-08:00",
            "endTimestamp": "2028-01-01T00:00:00.000-08:00",
            "resources": [{"type": "ACCELERATOR", "amount": "8", "acceleratorType": "nvidia-h100-80gb"}]
        }))
        .unwrap();
        let live = commitment_live(&c);
        assert_eq!(live.status, CommitmentStatus::Scheduled);
        assert_eq!(live.end.unwrap() - live.start.unwrap(), 365 * 86_400);
        let e = OperationError {
            code: "ZONE_RESOURCE_POOL_EXHAUSTED".into(),
            message: "The zone does not have enough resources".into(),
        };
        assert!(matches!(
            operation_error("x", &e),
            CloudError::InsufficientCapacity(_)
        ));
    }
}
