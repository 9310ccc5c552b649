//! Brings a cluster's node groups to the desired ones through [`NodeGroups`]: create the
//! missing, update in place what changed, delete the unwanted, wait for each, and stop at
//! the first failure with an exact account of what exists.
//!
//! Order: groups that failed to create are deleted first (so they can be created again),
//! then missing groups are created (all started, then waited on), then live groups are
//! updated, then unwanted groups are deleted. Capacity is added before it is taken away.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::{Duration, Instant};

use super::generation::FixedShape;
use super::group::NodeGroupSpec;
use super::stable_hash::fnv1a;
use crate::cloud::{
    CloudError, NodeGroup, NodeGroupRequest, NodeGroupStatus, NodeGroupUpdate, NodeGroups,
    WaitTarget,
};
use crate::model::{CapacityType, Scaling, Taint};

/// Where a pool's nodes run on AWS: the role they assume and the subnets they join.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// IAM role ARN of the nodes.
    pub node_role_arn: String,
    /// Subnet ids for the nodes.
    pub subnets: Vec<String>,
}

/// How long each kind of wait may take. Each bounds all the waits of its kind in one
/// run, counted from the run's start (as Terraform's `timeouts` bound a whole operation),
/// not each group's wait on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Until every created group is `ACTIVE`.
    pub create: Duration,
    /// Until every updated group is `ACTIVE` again.
    pub update: Duration,
    /// Until every deleted group is gone.
    pub delete: Duration,
}

impl Default for Timeouts {
    /// 45 minutes to create or update a group, 30 to delete one.
    fn default() -> Self {
        Timeouts {
            create: Duration::from_secs(45 * 60),
            update: Duration::from_secs(45 * 60),
            delete: Duration::from_secs(30 * 60),
        }
    }
}

/// A step that failed, its cloud error, and the groups that exist afterwards.
#[derive(Debug, Clone, PartialEq)]
pub struct ReconcileError {
    /// What was being done, e.g. `creating node group train-spot`.
    pub step: String,
    /// The cloud's answer.
    pub source: CloudError,
    /// Names of the pool's node groups that exist now.
    pub existing: Vec<String>,
}

impl fmt::Display for ReconcileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let existing = if self.existing.is_empty() {
            "none".to_string()
        } else {
            self.existing.join(", ")
        };
        write!(
            f,
            "{} failed: {}. Node groups that exist now: {existing}",
            self.step, self.source
        )
    }
}

impl std::error::Error for ReconcileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The result of [`apply`] or [`destroy`]: what is live afterwards, and the error if a
/// step failed (the live groups are then the ones that exist, not the desired ones).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The pool's groups as they exist now, sorted by name.
    pub live: Vec<NodeGroup>,
    /// The failed step, if any.
    pub error: Option<ReconcileError>,
}

/// The create request for `group` in `cluster`.
pub fn to_request(
    group: &NodeGroupSpec,
    cluster: &str,
    placement: &Placement,
    token: &str,
) -> NodeGroupRequest {
    let s = group.scaling;
    NodeGroupRequest {
        cluster: cluster.to_string(),
        name: group.name.clone(),
        capacity_type: group.capacity_type,
        instance_types: group.instance_types.clone(),
        ami_type: group.ami_type.clone(),
        scaling: Scaling {
            desired: Some(s.desired.unwrap_or(s.min)),
            ..s
        },
        labels: group.labels.clone(),
        taints: group.taints.clone(),
        tags: group.tags.clone(),
        node_role_arn: placement.node_role_arn.clone(),
        subnets: placement.subnets.clone(),
        client_request_token: Some(token.to_string()),
    }
}

/// A live group as a spec (for comparisons); `None` for a group on reserved capacity,
/// which a pool never creates.
pub fn spec_of_live(g: &NodeGroup) -> Option<NodeGroupSpec> {
    if g.capacity_type == CapacityType::Reserved {
        return None;
    }
    let mut taints = g.taints.clone();
    taints.sort();
    Some(NodeGroupSpec {
        name: g.name.clone(),
        capacity_type: g.capacity_type,
        instance_types: g.instance_types.clone(),
        ami_type: g.ami_type.clone(),
        scaling: g.scaling,
        labels: g.labels.clone(),
        taints,
        tags: g.tags.clone(),
    })
}

/// Describes each of `names` in `cluster`, skipping the ones that do not exist.
pub async fn read(
    api: &dyn NodeGroups,
    cluster: &str,
    names: &[String],
) -> Result<Vec<NodeGroup>, CloudError> {
    let mut out = Vec::new();
    for n in names {
        if let Some(g) = api.describe_node_group(cluster, n).await? {
            out.push(g);
        }
    }
    Ok(out)
}

/// Makes `cluster`'s groups match `desired`, starting from `live` (the pool's groups as
/// just read). Creates carry idempotency tokens derived from `token_seed` and the name.
pub async fn apply(
    api: &dyn NodeGroups,
    cluster: &str,
    desired: &[NodeGroupSpec],
    live: &[NodeGroup],
    placement: &Placement,
    timeouts: &Timeouts,
    token_seed: &str,
) -> Outcome {
    let mut run = Run::new(api, cluster, live);
    let result = run.apply(desired, placement, timeouts, token_seed).await;
    let names: Vec<String> = desired.iter().map(|g| g.name.clone()).collect();
    run.finish(&names, result).await
}

/// Deletes each of `names` that exists and waits until all are gone, `timeout` in all.
pub async fn destroy(
    api: &dyn NodeGroups,
    cluster: &str,
    names: &[String],
    timeout: Duration,
) -> Outcome {
    let mut run = Run::new(api, cluster, &[]);
    let result = run.delete_all(names, timeout).await;
    match result {
        Ok(()) => Outcome {
            live: Vec::new(),
            error: None,
        },
        Err(e) => {
            // What still exists is unknown until read again.
            run.known.clear();
            run.finish(names, Err(e)).await
        }
    }
}

/// A failed step before the final read: what was done and the cloud's error.
type StepResult = Result<(), (String, CloudError)>;

/// One reconcile run: the API, the cluster, the groups known to exist so far, and when
/// it started (timeouts count from there).
struct Run<'a> {
    api: &'a dyn NodeGroups,
    cluster: &'a str,
    known: BTreeMap<String, NodeGroup>,
    touched: BTreeSet<String>,
    started: Instant,
}

impl<'a> Run<'a> {
    fn new(api: &'a dyn NodeGroups, cluster: &'a str, live: &[NodeGroup]) -> Self {
        Run {
            api,
            cluster,
            known: live.iter().map(|g| (g.name.clone(), g.clone())).collect(),
            touched: live.iter().map(|g| g.name.clone()).collect(),
            started: Instant::now(),
        }
    }

    /// Waits for `name` to reach `target` with what is left of `timeout` since the run
    /// started (nothing left: the wait looks once). A timeout reports the time since the
    /// start, which is what the limit bounds.
    async fn wait(
        &self,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, (String, CloudError)> {
        let left = timeout.saturating_sub(self.started.elapsed());
        self.api
            .wait_until(self.cluster, name, target, left)
            .await
            .map_err(|e| {
                let step = match target {
                    WaitTarget::Active => format!("waiting for node group {name} to be ACTIVE"),
                    WaitTarget::Deleted => format!("waiting for node group {name} to be deleted"),
                };
                let e = match e {
                    CloudError::Timeout { what, .. } => CloudError::Timeout {
                        what,
                        waited: self.started.elapsed(),
                    },
                    e => e,
                };
                (step, e)
            })
    }

    async fn apply(
        &mut self,
        desired: &[NodeGroupSpec],
        placement: &Placement,
        timeouts: &Timeouts,
        token_seed: &str,
    ) -> StepResult {
        self.refuse_replacements(desired, placement)?;
        self.delete_failed(desired, timeouts.delete).await?;
        self.create_missing(desired, placement, timeouts.create, token_seed)
            .await?;
        for d in desired {
            self.update(d, timeouts.update).await?;
        }
        let wanted: BTreeSet<&str> = desired.iter().map(|g| g.name.as_str()).collect();
        let unwanted: Vec<String> = self
            .known
            .keys()
            .filter(|n| !wanted.contains(n.as_str()))
            .cloned()
            .collect();
        self.delete_all(&unwanted, timeouts.delete).await
    }

    /// A live group that differs in what cannot change in place is not touched: the plan
    /// should have rolled it to a new generation, so this is an error, not a silent delete.
    fn refuse_replacements(&self, desired: &[NodeGroupSpec], placement: &Placement) -> StepResult {
        for d in desired {
            let Some(l) = self.known.get(&d.name) else {
                continue;
            };
            if l.status == NodeGroupStatus::CreateFailed {
                continue;
            }
            let why = roll_reasons(d, l, placement);
            if why.is_empty() {
                continue;
            }
            return Err((
                format!("updating node group {}", d.name),
                CloudError::Invalid(format!(
                    "the live group differs in what cannot change in place ({}); such a \
                     change rolls the group to a new generation, so plan again (or delete \
                     the group) and apply that plan",
                    why.join("; ")
                )),
            ));
        }
        Ok(())
    }

    /// Deletes desired groups whose creation failed, so they are created again.
    async fn delete_failed(&mut self, desired: &[NodeGroupSpec], timeout: Duration) -> StepResult {
        let failed: Vec<String> = desired
            .iter()
            .filter(|d| {
                self.known
                    .get(&d.name)
                    .is_some_and(|l| l.status == NodeGroupStatus::CreateFailed)
            })
            .map(|d| d.name.clone())
            .collect();
        self.delete_all(&failed, timeout).await
    }

    /// Starts every missing group, then waits for each to be `ACTIVE`.
    async fn create_missing(
        &mut self,
        desired: &[NodeGroupSpec],
        placement: &Placement,
        timeout: Duration,
        token_seed: &str,
    ) -> StepResult {
        let missing: Vec<&NodeGroupSpec> = desired
            .iter()
            .filter(|d| !self.known.contains_key(&d.name))
            .collect();
        let wanted: BTreeSet<&str> = desired.iter().map(|g| g.name.as_str()).collect();
        for d in &missing {
            self.touched.insert(d.name.clone());
            let d = &self.with_inherited_count(d, &wanted);
            let req = to_request(d, self.cluster, placement, &token(token_seed, &d.name));
            let step = || format!("creating node group {}", d.name);
            match self.api.create_node_group(&req).await {
                Ok(g) => {
                    self.known.insert(g.name.clone(), g);
                }
                Err(CloudError::Conflict(msg)) => {
                    // Created by an earlier, interrupted attempt: adopt it when it is ours.
                    let found = self
                        .api
                        .describe_node_group(self.cluster, &d.name)
                        .await
                        .map_err(|e| (step(), e))?;
                    match found {
                        Some(g) if roll_reasons(d, &g, placement).is_empty() => {
                            self.known.insert(g.name.clone(), g);
                        }
                        _ => return Err((step(), CloudError::Conflict(msg))),
                    }
                }
                Err(e) => return Err((step(), e)),
            }
        }
        for d in &missing {
            self.wait_active(&d.name, timeout).await?;
        }
        Ok(())
    }

    /// `d` starting with as many nodes as the live group of its capacity type that it
    /// replaces (one not `wanted`, deleted once `d` is ready), so a roll keeps the pool's
    /// node count instead of dropping to `min`; unchanged when `d` sets its own count.
    fn with_inherited_count(&self, d: &NodeGroupSpec, wanted: &BTreeSet<&str>) -> NodeGroupSpec {
        let mut d = d.clone();
        if d.scaling.desired.is_some() {
            return d;
        }
        let replaced = self
            .known
            .values()
            .filter(|g| !wanted.contains(g.name.as_str()) && g.capacity_type == d.capacity_type)
            .map(|g| g.scaling.desired.unwrap_or(g.scaling.min))
            .max();
        if let Some(n) = replaced {
            d.scaling.desired = Some(n.clamp(d.scaling.min, d.scaling.max.max(d.scaling.min)));
        }
        d
    }

    /// Updates one live group in place: scaling, labels and taints in one config update,
    /// then tags; waits for `ACTIVE` before and after.
    async fn update(&mut self, d: &NodeGroupSpec, timeout: Duration) -> StepResult {
        let Some(l) = self.known.get(&d.name) else {
            return Ok(());
        };
        if l.status != NodeGroupStatus::Active {
            self.wait_active(&d.name, timeout).await?;
        }
        let Some(l) = self.known.get(&d.name).cloned() else {
            return Ok(());
        };
        let change = config_update(d, &l);
        if !change.is_empty() {
            let step = format!("updating node group {}", d.name);
            self.api
                .update_node_group_config(self.cluster, &d.name, &change)
                .await
                .map_err(|e| (step, e))?;
            self.wait_active(&d.name, timeout).await?;
        }
        let (add, remove) = tag_update(&d.tags, &l.tags);
        if !add.is_empty() || !remove.is_empty() {
            let step = format!("tagging node group {}", d.name);
            self.api
                .tag_node_group(&l.arn, &add, &remove)
                .await
                .map_err(|e| (step, e))?;
            if let Some(g) = self.known.get_mut(&d.name) {
                g.tags.extend(add);
                for k in &remove {
                    g.tags.remove(k);
                }
            }
        }
        Ok(())
    }

    /// Starts deleting each of `names` (already gone is fine), then waits for each.
    async fn delete_all(&mut self, names: &[String], timeout: Duration) -> StepResult {
        let mut started = Vec::new();
        for n in names {
            self.touched.insert(n.clone());
            match self.api.delete_node_group(self.cluster, n).await {
                Ok(()) => started.push(n),
                Err(CloudError::NotFound(_)) => {
                    self.known.remove(n);
                }
                // Already being deleted (an earlier attempt whose answer was lost, or an
                // interrupted run): wait for it like for our own delete.
                Err(CloudError::Conflict(msg)) => {
                    match self.api.describe_node_group(self.cluster, n).await {
                        Ok(Some(g)) if g.status == NodeGroupStatus::Deleting => started.push(n),
                        Ok(None) => {
                            self.known.remove(n);
                        }
                        _ => {
                            return Err((
                                format!("deleting node group {n}"),
                                CloudError::Conflict(msg),
                            ));
                        }
                    }
                }
                Err(e) => return Err((format!("deleting node group {n}"), e)),
            }
        }
        for n in started {
            self.wait(n, WaitTarget::Deleted, timeout).await?;
            self.known.remove(n);
        }
        Ok(())
    }

    async fn wait_active(&mut self, name: &str, timeout: Duration) -> StepResult {
        if let Some(g) = self.wait(name, WaitTarget::Active, timeout).await? {
            self.known.insert(g.name.clone(), g);
        }
        Ok(())
    }

    /// Reads every group this run touched or wanted, to report exactly what exists; when
    /// that read fails too, reports what the run itself saw.
    async fn finish(mut self, desired: &[String], result: StepResult) -> Outcome {
        self.touched.extend(desired.iter().cloned());
        let names: Vec<String> = self.touched.iter().cloned().collect();
        let live = match read(self.api, self.cluster, &names).await {
            Ok(v) => v,
            Err(_) => self.known.into_values().collect(),
        };
        let mut live = live;
        live.sort_by(|a, b| a.name.cmp(&b.name));
        let error = result.err().map(|(step, source)| ReconcileError {
            step,
            source,
            existing: live.iter().map(|g| g.name.clone()).collect(),
        });
        Outcome { live, error }
    }
}

/// Why live group `live` cannot become `d` in place: the one decision plan and apply use
/// ([`FixedShape::roll_reasons`]) over instance types, image, capacity, node role and
/// subnets; empty when it can (also how a group found on a create conflict is known to be
/// the one asked for).
fn roll_reasons(d: &NodeGroupSpec, live: &NodeGroup, placement: &Placement) -> Vec<String> {
    let Some(spec) = spec_of_live(live) else {
        return vec!["it runs on reserved capacity, which a pool does not manage".into()];
    };
    let have = FixedShape::of(&spec, &live.node_role_arn, Some(&live.subnets));
    let want = FixedShape::of(d, &placement.node_role_arn, Some(&placement.subnets));
    have.roll_reasons(&want)
}

/// The config update that turns `live` into `d`: scaling (the live desired count kept,
/// clamped into the new range, unless `d` sets one), labels and taints.
fn config_update(d: &NodeGroupSpec, live: &NodeGroup) -> NodeGroupUpdate {
    let (min, max) = (d.scaling.min, d.scaling.max);
    let live_count = live.scaling.desired.unwrap_or(live.scaling.min);
    let want = Scaling {
        min,
        max,
        desired: Some(
            d.scaling
                .desired
                .unwrap_or(live_count)
                .clamp(min, max.max(min)),
        ),
    };
    let mut u = NodeGroupUpdate {
        scaling: (want != live.scaling).then_some(want),
        ..Default::default()
    };
    for (k, v) in &d.labels {
        if live.labels.get(k) != Some(v) {
            u.labels_add.insert(k.clone(), v.clone());
        }
    }
    u.labels_remove = live
        .labels
        .keys()
        .filter(|k| !d.labels.contains_key(*k))
        .cloned()
        .collect();
    let want_taints = &d.taints;
    let same_slot = |a: &Taint, b: &Taint| a.key == b.key && a.effect == b.effect;
    u.taints_add = want_taints
        .iter()
        .filter(|t| !live.taints.contains(t))
        .cloned()
        .collect();
    u.taints_remove = live
        .taints
        .iter()
        .filter(|l| !want_taints.iter().any(|t| same_slot(t, l)))
        .cloned()
        .collect();
    u
}

/// Tags to add or overwrite and keys to remove; `aws:` tags belong to AWS and stay.
fn tag_update(
    want: &BTreeMap<String, String>,
    live: &BTreeMap<String, String>,
) -> (BTreeMap<String, String>, Vec<String>) {
    let add = want
        .iter()
        .filter(|(k, v)| live.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let remove = live
        .keys()
        .filter(|k| !want.contains_key(*k) && !k.starts_with("aws:"))
        .cloned()
        .collect();
    (add, remove)
}

/// A short idempotency token for one group's create within one apply: the same seed and
/// name give the same token, so a create retried inside the apply is not a second group.
pub fn token(seed: &str, name: &str) -> String {
    format!("gputf-{:016x}-{:016x}", fnv1a(seed), fnv1a(name))
}

#[cfg(test)]
mod tests;
