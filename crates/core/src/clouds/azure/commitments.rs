//! Azure reserved VM instances (`Microsoft.Capacity` reservation orders) and capacity
//! reservations (`Microsoft.Compute` capacity reservation groups) over Resource Manager:
//! [`AzureCommitments`] implements [`Commitments`].
//!
//! A reservation is priced with `calculatePrice` (read-only; it also hands out the
//! `reservationOrderId` a purchase must use), bought with `PUT reservationOrders/{id}`
//! (idempotent: the id is the purchase's marker, so a repeat after a lost answer buys
//! nothing new) and read with `GET reservationOrders/{id}`; it cannot be cancelled here. A
//! capacity reservation is a group and one reservation in it, both named stably by the
//! caller (`PUT` is idempotent by name); it is cancelled by deleting both.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::Method;
use serde_json::{Value, json};

use super::arm::Arm;
use crate::seam::CloudError;
use crate::seam::commitment_kind::CommitmentKind;
use crate::seam::commitments::{
    CommitmentStatus, CommitmentUse, Commitments, LiveCommitment, Order, PriceQuote,
};
use crate::time::parse_rfc3339;

/// The api-version of `Microsoft.Capacity` (reservations).
pub const CAPACITY_API_VERSION: &str = "2022-11-01";
/// The api-version of `Microsoft.Compute` capacity reservations.
pub const COMPUTE_API_VERSION: &str = "2024-07-01";

/// Azure commitments of one subscription.
#[derive(Debug, Clone)]
pub struct AzureCommitments {
    arm: Arm,
    subscription: String,
    operation_timeout: Duration,
}

impl AzureCommitments {
    /// A client of `subscription` over `arm` (made by [`super::AzureSession`]).
    pub(super) fn new(arm: Arm, subscription: String, operation_timeout: Duration) -> Self {
        AzureCommitments {
            arm,
            subscription,
            operation_timeout,
        }
    }

    fn reservation_body(&self, order: &Order) -> Option<Value> {
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
            return None;
        };
        Some(json!({
            "sku": {"name": sku},
            "location": location,
            "properties": {
                "reservedResourceType": "VirtualMachines",
                "billingScopeId": format!("/subscriptions/{}", self.subscription),
                "term": term,
                "billingPlan": billing_plan,
                "quantity": quantity,
                "displayName": display_name,
                "appliedScopeType": "Shared",
                "reservedResourceProperties": {"instanceFlexibility": "On"},
                "renew": false
            }
        }))
    }

    /// GET of an ARM path at `api_version`; `None` on 404.
    async fn get_path(
        &self,
        path: &str,
        api_version: &str,
        what: &str,
    ) -> Result<Option<Value>, CloudError> {
        self.get_url(&self.arm.url(path, api_version), what).await
    }

    /// GET of an ARM URL; `None` on 404.
    async fn get_url(&self, url: &str, what: &str) -> Result<Option<Value>, CloudError> {
        match self.arm.call(Method::GET, url, None, &[], what).await {
            Ok(a) => Ok(Some(a.body)),
            Err(CloudError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The capacity reservation at ARM path `path` with its instance view (which lists
    /// the VMs allocated in it); `None` on 404.
    async fn capacity_reservation(&self, path: &str) -> Result<Option<LiveCommitment>, CloudError> {
        let url = format!(
            "{}&$expand=instanceView",
            self.arm.url(path, COMPUTE_API_VERSION)
        );
        Ok(self
            .get_url(&url, "read the capacity reservation")
            .await?
            .map(|b| capacity_live(&b)))
    }

    /// Every item of an ARM list at `url`, following `nextLink`.
    async fn list_all(&self, url: String, what: &str) -> Result<Vec<Value>, CloudError> {
        let mut url = url;
        let mut out = Vec::new();
        loop {
            let a = self.arm.call(Method::GET, &url, None, &[], what).await?;
            if let Some(items) = a.body.get("value").and_then(Value::as_array) {
                out.extend(items.iter().cloned());
            }
            match a.body.get("nextLink").and_then(Value::as_str) {
                Some(next) if !next.is_empty() && next != url => url = next.to_string(),
                _ => return Ok(out),
            }
        }
    }

    /// The reservation orders the credentials can read whose reservations are in
    /// `region`, each with what it holds and its use.
    async fn orders_in(&self, region: &str) -> Result<Vec<LiveCommitment>, CloudError> {
        let orders = self
            .list_all(
                self.arm.url(
                    "/providers/Microsoft.Capacity/reservationOrders",
                    CAPACITY_API_VERSION,
                ),
                "list the reservation orders",
            )
            .await?;
        let mut out = Vec::new();
        for body in &orders {
            let Some(name) = body.get("name").and_then(Value::as_str) else {
                continue;
            };
            let path = order_path(name)?;
            let list = self
                .get_path(
                    &format!("{path}/reservations"),
                    CAPACITY_API_VERSION,
                    "read the reservations of the order",
                )
                .await?
                .unwrap_or(Value::Null);
            let here = list
                .get("value")
                .and_then(Value::as_array)
                .is_some_and(|items| {
                    items.iter().any(|r| {
                        r.get("location")
                            .and_then(Value::as_str)
                            .is_some_and(|l| same_location(l, region))
                    })
                });
            if !here {
                continue;
            }
            let mut live = order_live(body);
            order_holdings(&mut live, &list);
            if live.status == CommitmentStatus::Active {
                live.in_use = orders_use(&list);
            }
            out.push(live);
        }
        Ok(out)
    }

    /// The subscription's capacity reservations in `region`, each with its instance view.
    async fn capacity_in(&self, region: &str) -> Result<Vec<LiveCommitment>, CloudError> {
        let groups = self
            .list_all(
                self.arm.url(
                    &format!(
                        "/subscriptions/{}/providers/Microsoft.Compute/capacityReservationGroups",
                        self.subscription
                    ),
                    COMPUTE_API_VERSION,
                ),
                "list the capacity reservation groups",
            )
            .await?;
        let mut out = Vec::new();
        for g in &groups {
            let in_region = g
                .get("location")
                .and_then(Value::as_str)
                .is_some_and(|l| same_location(l, region));
            let ids = g
                .pointer("/properties/capacityReservations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r.get("id").and_then(Value::as_str));
            for id in ids.filter(|_| in_region) {
                if let Some(live) = self.capacity_reservation(id).await? {
                    out.push(live);
                }
            }
        }
        Ok(out)
    }

    /// Polls a reservation order until its purchase has settled (not `Creating` or
    /// `PendingBilling`).
    async fn settle_order(&self, path: &str) -> Result<Value, CloudError> {
        let what = format!("reservation order {path}");
        crate::seam::poll::until(
            &self.arm.pace,
            self.arm.backoff,
            self.operation_timeout,
            &self.arm.cancel,
            &what,
            || async {
                let body = self
                    .get_path(path, CAPACITY_API_VERSION, "read the reservation order")
                    .await?
                    .ok_or_else(|| CloudError::NotFound(format!("{what} after its purchase")))?;
                let state = body
                    .pointer("/properties/provisioningState")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                Ok((!matches!(state, "Creating" | "PendingBilling" | "")).then_some(body))
            },
        )
        .await
    }
}

/// Whether two Azure location spellings name the same region (`East US`, `eastus`).
fn same_location(a: &str, b: &str) -> bool {
    let canon = |s: &str| {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase()
    };
    canon(a) == canon(b)
}

fn order_path(order_id: &str) -> Result<String, CloudError> {
    let ok = !order_id.is_empty()
        && order_id.len() <= 64
        && order_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-');
    if ok {
        Ok(format!(
            "/providers/Microsoft.Capacity/reservationOrders/{order_id}"
        ))
    } else {
        Err(CloudError::Invalid(format!(
            "{order_id:?} is not a reservation order id"
        )))
    }
}

/// A legal ARM name segment (what the caller derived; safe in a path).
pub(super) fn segment(s: &str) -> Result<&str, CloudError> {
    let ok = !s.is_empty()
        && s.len() <= 90
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '(' | ')'));
    if ok {
        Ok(s)
    } else {
        Err(CloudError::Invalid(format!(
            "{s:?} is not a legal Azure resource name"
        )))
    }
}

fn order_status(state: &str) -> CommitmentStatus {
    match state {
        "Succeeded" => CommitmentStatus::Active,
        "Expired" => CommitmentStatus::Expired,
        "Cancelled" => CommitmentStatus::Cancelled,
        "Failed" | "BillingFailed" => CommitmentStatus::Failed,
        _ => CommitmentStatus::Scheduled,
    }
}

fn order_live(body: &Value) -> LiveCommitment {
    let p = body.get("properties").cloned().unwrap_or(Value::Null);
    let text = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let state = text("provisioningState");
    LiveCommitment {
        id: body
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        kind: CommitmentKind::AzureReservation,
        status: order_status(&state),
        cloud_state: state,
        zone: None,
        instance_type: String::new(),
        instance_count: p
            .get("originalQuantity")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32,
        start: parse_rfc3339(&text("benefitStartTime")),
        end: parse_rfc3339(&text("expiryDateTime")).or_else(|| parse_rfc3339(&text("expiryDate"))),
        tags: BTreeMap::new(),
        in_use: None,
        term_years: match text("term").as_str() {
            "P1Y" => Some(1),
            "P3Y" => Some(3),
            "P5Y" => Some(5),
            _ => None,
        },
        billing_plan: Some(text("billingPlan").to_ascii_lowercase()).filter(|b| !b.is_empty()),
        platform: None,
        match_criteria: None,
    }
}

/// What an order's reservations (`GET …/reservations`) hold: the VM size (of the first)
/// and the instances (all), set on `live`.
fn order_holdings(live: &mut LiveCommitment, list: &Value) {
    let items = list.get("value").and_then(Value::as_array);
    let Some(items) = items.filter(|i| !i.is_empty()) else {
        return;
    };
    if let Some(sku) = items[0].pointer("/sku/name").and_then(Value::as_str) {
        live.instance_type = sku.to_string();
    }
    let quantity: u64 = items
        .iter()
        .filter_map(|r| r.pointer("/properties/quantity").and_then(Value::as_u64))
        .sum();
    if quantity > 0 {
        live.instance_count = quantity as u32;
    }
}

/// The use of an order's reservations (`GET …/reservations`): each one's shortest-grain
/// utilization aggregate (a percentage Azure computes daily), weighted by its quantity.
/// `None` until Azure has measured every reservation of the order.
fn orders_use(list: &Value) -> Option<CommitmentUse> {
    let mut held = 0u32;
    let mut used_share = 0.0;
    for r in list.get("value")?.as_array()? {
        let quantity = r.pointer("/properties/quantity")?.as_u64()? as u32;
        let percent = r
            .pointer("/properties/utilization/aggregates")?
            .as_array()?
            .iter()
            .filter(|a| {
                a.get("valueUnit")
                    .and_then(Value::as_str)
                    .is_some_and(|u| u.eq_ignore_ascii_case("percentage"))
            })
            .filter_map(|a| Some((a.get("grain")?.as_f64()?, a.get("value")?.as_f64()?)))
            .min_by(|a, b| a.0.total_cmp(&b.0))?
            .1;
        held += quantity;
        used_share += percent * f64::from(quantity);
    }
    if held == 0 {
        return None;
    }
    CommitmentUse::from_percent(used_share / f64::from(held), held)
}

fn capacity_live(body: &Value) -> LiveCommitment {
    let state = body
        .pointer("/properties/provisioningState")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let status = match state.as_str() {
        "Succeeded" => CommitmentStatus::Active,
        "Failed" => CommitmentStatus::Failed,
        "Deleting" => CommitmentStatus::Cancelled,
        _ => CommitmentStatus::Scheduled,
    };
    LiveCommitment {
        id: body
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        kind: CommitmentKind::AzureCapacityReservation,
        status,
        cloud_state: state,
        zone: body
            .pointer("/zones/0")
            .and_then(Value::as_str)
            .map(str::to_string),
        instance_type: body
            .pointer("/sku/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        instance_count: body
            .pointer("/sku/capacity")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32,
        start: body
            .pointer("/properties/provisioningTime")
            .and_then(Value::as_str)
            .and_then(parse_rfc3339),
        end: None,
        in_use: body
            .pointer("/properties/instanceView/utilizationInfo")
            .and_then(|u| {
                let held = body.pointer("/sku/capacity")?.as_u64()? as u32;
                // Absent when nothing is allocated in it.
                let used = u
                    .get("virtualMachinesAllocated")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                CommitmentUse::counted(used as u32, held)
            }),
        term_years: None,
        billing_plan: None,
        platform: None,
        match_criteria: None,
        tags: body
            .get("tags")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The total of a `calculatePrice` answer: the sum of its payment schedule (one payment
/// up front, or one a month), else its `pricingCurrencyTotal`.
fn quote_total(props: &Value) -> Option<(f64, String)> {
    let money = |v: &Value| {
        Some((
            v.get("amount")?.as_f64()?,
            v.get("currencyCode")?.as_str()?.to_string(),
        ))
    };
    let schedule: Vec<(f64, String)> = props
        .get("paymentSchedule")
        .and_then(Value::as_array)
        .map(|s| {
            s.iter()
                .filter_map(|p| money(p.get("pricingCurrencyTotal")?))
                .collect()
        })
        .unwrap_or_default();
    if let Some((_, cur)) = schedule.first()
        && schedule.iter().all(|(_, c)| c == cur)
    {
        return Some((schedule.iter().map(|(a, _)| a).sum(), cur.clone()));
    }
    money(props.get("pricingCurrencyTotal")?)
}

#[async_trait]
impl Commitments for AzureCommitments {
    async fn quote(&self, order: &Order) -> Result<Option<PriceQuote>, CloudError> {
        let Some(body) = self.reservation_body(order) else {
            return Ok(None);
        };
        let url = self.arm.url(
            "/providers/Microsoft.Capacity/calculatePrice",
            CAPACITY_API_VERSION,
        );
        let a = self
            .arm
            .call(Method::POST, &url, Some(&body), &[], "calculatePrice")
            .await?;
        let props = a.body.get("properties").cloned().unwrap_or(Value::Null);
        let id = props
            .get("reservationOrderId")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                CloudError::Other("calculatePrice answered no reservationOrderId".into())
            })?;
        let (total, currency) = quote_total(&props)
            .ok_or_else(|| CloudError::Other("calculatePrice answered no total".into()))?;
        Ok(Some(PriceQuote {
            id: id.to_string(),
            total,
            currency,
        }))
    }

    async fn purchase(
        &self,
        order: &Order,
        tags: &BTreeMap<String, String>,
    ) -> Result<LiveCommitment, CloudError> {
        match order {
            Order::AzureReservation { order_id, .. } => {
                let path = order_path(order_id)?;
                let body = self.reservation_body(order).unwrap_or(Value::Null);
                self.arm
                    .call(
                        Method::PUT,
                        &self.arm.url(&path, CAPACITY_API_VERSION),
                        Some(&body),
                        &[],
                        "purchase the reservation order",
                    )
                    .await
                    .map_err(|e| match e {
                        CloudError::Invalid(m) if m.contains("CalculatePrice again") => {
                            CloudError::Conflict(format!(
                                "the price quoted at plan has expired ({m}): run terraform plan again to see the current price"
                            ))
                        }
                        other => other,
                    })?;
                let settled = self.settle_order(&path).await?;
                Ok(order_live(&settled))
            }
            Order::AzureCapacityReservation {
                location,
                resource_group,
                group,
                name,
                sku,
                capacity,
                zone,
            } => {
                let group_path = format!(
                    "/subscriptions/{}/resourceGroups/{}/providers/Microsoft.Compute/capacityReservationGroups/{}",
                    self.subscription,
                    segment(resource_group)?,
                    segment(group)?
                );
                let zones: Vec<&str> = zone.iter().map(String::as_str).collect();
                let mut group_body = json!({"location": location, "tags": tags});
                if !zones.is_empty() {
                    group_body["zones"] = json!(zones);
                }
                self.arm
                    .call(
                        Method::PUT,
                        &self.arm.url(&group_path, COMPUTE_API_VERSION),
                        Some(&group_body),
                        &[],
                        "create the capacity reservation group",
                    )
                    .await?;
                let path = format!("{group_path}/capacityReservations/{}", segment(name)?);
                let mut body = json!({
                    "location": location,
                    "sku": {"name": sku, "capacity": capacity},
                    "tags": tags
                });
                if !zones.is_empty() {
                    body["zones"] = json!(zones);
                }
                let a = self
                    .arm
                    .call(
                        Method::PUT,
                        &self.arm.url(&path, COMPUTE_API_VERSION),
                        Some(&body),
                        &[],
                        "create the capacity reservation",
                    )
                    .await?;
                if let Some(op) = &a.operation {
                    self.arm.wait(op, &path, self.operation_timeout).await?;
                }
                self.capacity_reservation(&path).await?.ok_or_else(|| {
                    CloudError::Other(format!("{path} is not there after its creation"))
                })
            }
            _ => Err(CloudError::Invalid(
                "only Azure orders can be placed on Azure".into(),
            )),
        }
    }

    async fn get(&self, _location: &str, id: &str) -> Result<Option<LiveCommitment>, CloudError> {
        if id.to_ascii_lowercase().starts_with("/subscriptions/") {
            if !id.split('/').all(|s| s.is_empty() || segment(s).is_ok()) {
                return Err(CloudError::Invalid(format!("{id:?} is not an ARM id")));
            }
            return self.capacity_reservation(id).await;
        }
        let path = order_path(id)?;
        let Some(body) = self
            .get_path(&path, CAPACITY_API_VERSION, "read the reservation order")
            .await?
        else {
            return Ok(None);
        };
        let mut live = order_live(&body);
        // The VM size and the utilization are the order's reservations', not the order's.
        let reservations = self
            .get_path(
                &format!("{path}/reservations"),
                CAPACITY_API_VERSION,
                "read the reservations of the order",
            )
            .await?;
        if let Some(list) = &reservations {
            order_holdings(&mut live, list);
            if live.status == CommitmentStatus::Active {
                live.in_use = orders_use(list);
            }
        }
        Ok(Some(live))
    }

    async fn find_by_marker(
        &self,
        location: &str,
        key: &str,
    ) -> Result<Vec<LiveCommitment>, CloudError> {
        // A capacity reservation's key is `<resource group>/<group>/<name>`.
        let id = match key.split('/').collect::<Vec<_>>()[..] {
            [rg, group, name] => format!(
                "/subscriptions/{}/resourceGroups/{}/providers/Microsoft.Compute/capacityReservationGroups/{}/capacityReservations/{}",
                self.subscription,
                segment(rg)?,
                segment(group)?,
                segment(name)?
            ),
            _ => key.to_string(),
        };
        Ok(self.get(location, &id).await?.into_iter().collect())
    }

    async fn list(&self, region: &str) -> Result<Vec<LiveCommitment>, CloudError> {
        let mut all = self.orders_in(region).await?;
        all.extend(self.capacity_in(region).await?);
        Ok(all)
    }

    async fn cancel(&self, _location: &str, id: &str) -> Result<(), CloudError> {
        if !id.to_ascii_lowercase().starts_with("/subscriptions/") {
            return Err(CloudError::Invalid(format!(
                "reservation order {id} cannot be cancelled: reserved instances run to their end"
            )));
        }
        let a = match self
            .arm
            .call(
                Method::DELETE,
                &self.arm.url(id, COMPUTE_API_VERSION),
                None,
                &[],
                "delete the capacity reservation",
            )
            .await
        {
            Ok(a) => Some(a),
            Err(CloudError::NotFound(_)) => None,
            Err(e) => return Err(e),
        };
        if let Some(op) = a.as_ref().and_then(|a| a.operation.as_ref()) {
            self.arm.wait(op, id, self.operation_timeout).await?;
        }
        // The group held only this reservation: delete it too.
        if let Some((group, _)) = id.rsplit_once("/capacityReservations/") {
            match self
                .arm
                .call(
                    Method::DELETE,
                    &self.arm.url(group, COMPUTE_API_VERSION),
                    None,
                    &[],
                    "delete the capacity reservation group",
                )
                .await
            {
                Ok(_) | Err(CloudError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_of_a_capacity_reservation_is_its_allocated_vms() {
        let body = |view: Value| {
            json!({"id": "/subscriptions/s/x", "sku": {"name": "Standard_ND96isr_H100_v5",
                "capacity": 4}, "properties": {"provisioningState": "Succeeded",
                "instanceView": view}})
        };
        let two = body(json!({"utilizationInfo": {"currentCapacity": 4,
            "virtualMachinesAllocated": [{"id": "/vm/a"}, {"id": "/vm/b"}]}}));
        let u = capacity_live(&two).in_use.unwrap();
        assert_eq!((u.used_instances, u.utilization), (2, 0.5));
        let none = body(json!({"utilizationInfo": {"currentCapacity": 4}}));
        assert_eq!(capacity_live(&none).in_use.unwrap().used_instances, 0);
        let mut unread = body(Value::Null);
        unread["properties"]
            .as_object_mut()
            .unwrap()
            .remove("instanceView");
        assert_eq!(
            capacity_live(&unread).in_use,
            None,
            "no instance view: unknown"
        );
    }

    #[test]
    fn use_of_an_order_is_its_reservations_shortest_grain_weighted_by_quantity() {
        let reservation = |quantity: u32, day: f64, month: f64| {
            json!({"properties": {"quantity": quantity, "utilization": {"trend": "SAME",
                "aggregates": [
                    {"grain": 30.0, "grainUnit": "days", "value": month, "valueUnit": "percentage"},
                    {"grain": 1.0, "grainUnit": "days", "value": day, "valueUnit": "percentage"}]}}})
        };
        let list = json!({"value": [reservation(1, 100.0, 10.0), reservation(3, 20.0, 90.0)]});
        let u = orders_use(&list).unwrap();
        assert!(
            (u.utilization - 0.4).abs() < 1e-9,
            "(100 + 3 x 20) / 4 = 40 %"
        );
        assert_eq!(u.used_instances, 2);
        let unmeasured = json!({"value": [{"properties": {"quantity": 2}}]});
        assert_eq!(orders_use(&unmeasured), None, "not measured is not zero");
    }

    #[test]
    fn a_quote_totals_its_payment_schedule() {
        let monthly = json!({"pricingCurrencyTotal": {"amount": 100.0, "currencyCode": "USD"},
            "paymentSchedule": (0..12).map(|_| json!({"pricingCurrencyTotal":
                {"amount": 100.0, "currencyCode": "USD"}})).collect::<Vec<_>>()});
        assert_eq!(quote_total(&monthly), Some((1200.0, "USD".into())));
        let upfront = json!({"pricingCurrencyTotal": {"amount": 999.5, "currencyCode": "USD"}});
        assert_eq!(quote_total(&upfront), Some((999.5, "USD".into())));
    }

    #[test]
    fn ids_and_states() {
        assert!(order_path("5bd6f0c6-7a4d-4e7b-9f26-3c7b0f1d2e3a").is_ok());
        assert!(order_path("../x").is_err());
        assert!(segment("gpu-tf-0123").is_ok() && segment("a/b").is_err());
        assert_eq!(order_status("PendingBilling"), CommitmentStatus::Scheduled);
        assert_eq!(order_status("Succeeded"), CommitmentStatus::Active);
        assert_eq!(order_status("Expired"), CommitmentStatus::Expired);
    }
}
