//! Brings a cluster's groups to the desired ones through [`NodeGroups`]: create the
//! missing, update in place what changed, delete the unwanted, wait for each, and stop at
//! the first failure with an exact account of what exists.
//!
//! Order: groups that failed to create are deleted first (so they can be created again),
//! then missing groups are created (all started, then waited on; one at a time where the
//! cloud runs one operation per cluster), then live groups are updated, then unwanted
//! groups are deleted. Capacity is added before it is taken away. Every mutating call goes
//! through one [`Journal`], returned in the [`Outcome`].
//!
//! Where the cloud runs one operation per cluster (AKS, GKE), each change takes the
//! cluster's turn first ([`NodeGroups::take_turn`]) and holds it until the operation it
//! started has finished, so this process's pools on one cluster queue behind each other
//! instead of being refused. A change the cloud still refuses as busy (another process, the
//! console, the cloud's own upgrades: [`CloudError::Busy`]) is sent again after a pause
//! (2 s doubling to 30 s) until the run's timeout of that kind runs out; a refused request
//! did nothing, and a create sent again carries the same name and token, so it never
//! makes a second group. Time queued behind this process's own changes does not count
//! against the timeouts (each of those is bounded by its own); time refused does.
//! [`Outcome::waits`] says how long the run waited, for the apply's warning.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use super::drift;
use super::stable_hash::fnv1a;
use crate::model::{CapacityType, GroupSpec};
use crate::retry::Backoff;
use crate::seam::choke::{Journal, Mutation, Verb};
use crate::seam::delta::{ConfigDelta, tag_delta};
use crate::seam::{
    CloudError, ClusterRef, NodeGroup, NodeGroupStatus, NodeGroups, Turn, WaitTarget,
};

/// Pauses before a change the cloud refused as busy is sent again: 2 s doubling to 30 s,
/// with jitter (so two waiting processes do not knock in step).
const BUSY_BACKOFF: Backoff = Backoff {
    initial: Duration::from_secs(2),
    max: Duration::from_secs(30),
};

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
    /// Every mutating call made, in order.
    pub mutations: Vec<Mutation>,
    /// How long the run waited for its turns at the cluster.
    pub waits: TurnWaits,
}

/// How long a run waited for its turns at a cluster that runs one operation at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnWaits {
    /// Queued behind this process's other changes to the cluster.
    pub queued: Duration,
    /// Changes the cloud refused because another operation was running.
    pub refused: u32,
    /// Paused before sending refused changes again.
    pub refused_for: Duration,
    /// The cloud's last busy answer (it names the operation that held the cluster).
    pub last_refusal: Option<String>,
}

impl TurnWaits {
    /// All the time spent waiting for turns.
    pub fn total(&self) -> Duration {
        self.queued + self.refused_for
    }
}

/// Reads each of `names` in `cluster`, skipping the ones that do not exist.
pub async fn read(
    api: &dyn NodeGroups,
    cluster: &ClusterRef,
    names: &[String],
) -> Result<Vec<NodeGroup>, CloudError> {
    let mut out = Vec::new();
    for n in names {
        if let Some(g) = api.get_group(cluster, n).await? {
            out.push(g);
        }
    }
    Ok(out)
}

/// Makes `cluster`'s groups match `desired`, starting from `live` (the pool's groups as
/// just read). Creates carry idempotency tokens derived from `token_seed` and the name.
pub async fn apply(
    api: &dyn NodeGroups,
    cluster: &ClusterRef,
    desired: &[GroupSpec],
    live: &[NodeGroup],
    timeouts: &Timeouts,
    token_seed: &str,
) -> Outcome {
    let mut run = Run::new(api, cluster, live);
    let result = run.apply(desired, timeouts, token_seed).await;
    let names: Vec<String> = desired.iter().map(|g| g.name.clone()).collect();
    run.finish(&names, result).await
}

/// Deletes each of `names` that exists and waits until all are gone, `timeout` in all.
pub async fn destroy(
    api: &dyn NodeGroups,
    cluster: &ClusterRef,
    names: &[String],
    timeout: Duration,
) -> Outcome {
    let mut run = Run::new(api, cluster, &[]);
    let result = run.delete_all(names, timeout).await;
    match result {
        Ok(()) => Outcome {
            live: Vec::new(),
            error: None,
            mutations: run.journal.entries(),
            waits: run.waits,
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

/// One reconcile run: the API, the cluster, the groups known to exist so far, when it
/// started (timeouts count from there), the journal of its mutating calls and its waits
/// for turns.
struct Run<'a> {
    api: &'a dyn NodeGroups,
    cluster: &'a ClusterRef,
    known: BTreeMap<String, NodeGroup>,
    touched: BTreeSet<String>,
    /// When the run started, on the adapter's clock.
    started: Duration,
    journal: Journal,
    waits: TurnWaits,
}

impl<'a> Run<'a> {
    fn new(api: &'a dyn NodeGroups, cluster: &'a ClusterRef, live: &[NodeGroup]) -> Self {
        Run {
            api,
            cluster,
            known: live
                .iter()
                .map(|g| (g.spec.name.clone(), g.clone()))
                .collect(),
            touched: live.iter().map(|g| g.spec.name.clone()).collect(),
            started: api.now(),
            journal: Journal::new(),
            waits: TurnWaits::default(),
        }
    }

    /// Time since the run started, less the time queued behind this process's other
    /// changes: what the timeouts bound.
    fn elapsed(&self) -> Duration {
        self.api
            .now()
            .saturating_sub(self.started)
            .saturating_sub(self.waits.queued)
    }

    /// Takes the cluster's turn for a change (at once where the cloud runs operations in
    /// parallel), counting the time queued.
    async fn turn(&mut self, step: &str) -> Result<Turn, (String, CloudError)> {
        let turn = self
            .api
            .take_turn(self.cluster)
            .await
            .map_err(|e| (step.to_string(), e))?;
        self.waits.queued += turn.waited;
        Ok(turn)
    }

    /// After the cloud refused a change as busy (`refused` times so far for this change):
    /// pauses before it is sent again, or fails when the pause would pass `timeout`
    /// (counted from the run's start) with the cloud's answer, which names the operation
    /// that held the cluster.
    async fn busy_pause(
        &mut self,
        step: &str,
        refused: u32,
        answer: String,
        timeout: Duration,
    ) -> Result<(), (String, CloudError)> {
        self.waits.refused += 1;
        self.waits.last_refusal = Some(answer.clone());
        let pause = BUSY_BACKOFF.delay(refused, None);
        // Pauses count even on a clock they do not move.
        let spent = self.elapsed().max(self.waits.refused_for);
        if spent + pause > timeout {
            let what = format!(
                "{} cluster {} to finish another operation (its last answer: {answer})",
                self.api.traits().service,
                self.cluster
            );
            return Err((
                step.to_string(),
                CloudError::Timeout {
                    what,
                    waited: spent,
                },
            ));
        }
        self.api
            .pause(pause)
            .await
            .map_err(|e| (step.to_string(), e))?;
        self.waits.refused_for += pause;
        Ok(())
    }

    /// What a group is called in messages: `node group train-spot` on EKS, `agent pool
    /// gs…` on AKS.
    fn what(&self, name: &str) -> String {
        format!("{} {name}", self.api.traits().noun)
    }

    /// The journal's name of group `name`: `<cluster>/<name>`.
    fn target(&self, name: &str) -> String {
        format!("{}/{name}", self.cluster)
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
        let left = timeout.saturating_sub(self.elapsed());
        self.api
            .wait_until(self.cluster, name, target, left)
            .await
            .map_err(|e| {
                let step = match target {
                    WaitTarget::Active => format!("waiting for {} to be ACTIVE", self.what(name)),
                    WaitTarget::Deleted => format!("waiting for {} to be deleted", self.what(name)),
                };
                let e = match e {
                    CloudError::Timeout { what, .. } => CloudError::Timeout {
                        what,
                        waited: self.elapsed(),
                    },
                    e => e,
                };
                (step, e)
            })
    }

    async fn apply(
        &mut self,
        desired: &[GroupSpec],
        timeouts: &Timeouts,
        token_seed: &str,
    ) -> StepResult {
        self.refuse_replacements(desired)?;
        self.delete_failed(desired, timeouts.delete).await?;
        self.create_missing(desired, timeouts.create, token_seed)
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
    fn refuse_replacements(&self, desired: &[GroupSpec]) -> StepResult {
        for d in desired {
            let Some(l) = self.known.get(&d.name) else {
                continue;
            };
            if l.status == NodeGroupStatus::CreateFailed {
                continue;
            }
            let why = roll_reasons(d, l);
            if why.is_empty() {
                continue;
            }
            return Err((
                format!("updating {}", self.what(&d.name)),
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
    async fn delete_failed(&mut self, desired: &[GroupSpec], timeout: Duration) -> StepResult {
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

    /// Starts every missing group, then waits for each to be `ACTIVE` (where the cloud
    /// runs one operation per cluster, each takes the cluster's turn and is waited for
    /// before the next starts).
    async fn create_missing(
        &mut self,
        desired: &[GroupSpec],
        timeout: Duration,
        token_seed: &str,
    ) -> StepResult {
        let serial = self.api.traits().serial_operations;
        let missing: Vec<&GroupSpec> = desired
            .iter()
            .filter(|d| !self.known.contains_key(&d.name))
            .collect();
        let wanted: BTreeSet<&str> = desired.iter().map(|g| g.name.as_str()).collect();
        for d in &missing {
            self.touched.insert(d.name.clone());
            let d = &self.with_inherited_count(d, &wanted);
            let step = format!("creating {}", self.what(&d.name));
            let turn = self.turn(&step).await?;
            self.create_one(d, &step, timeout, &token(token_seed, &d.name))
                .await?;
            if serial {
                self.wait_active(&d.name, timeout).await?;
            }
            drop(turn);
        }
        if !serial {
            for d in &missing {
                self.wait_active(&d.name, timeout).await?;
            }
        }
        Ok(())
    }

    /// Sends the create of `d` (again after a pause while the cloud is busy; the same name
    /// and token, so never a second group) and records the group; a group of that name
    /// found instead (an earlier, interrupted attempt) is adopted when it is `d`.
    async fn create_one(
        &mut self,
        d: &GroupSpec,
        step: &str,
        timeout: Duration,
        token: &str,
    ) -> StepResult {
        let (api, cluster) = (self.api, self.cluster);
        let mut refused = 0;
        loop {
            let created = self
                .journal
                .run(
                    Verb::Create,
                    &self.target(&d.name),
                    api.create_group(cluster, d, token),
                )
                .await;
            let refusal = match created {
                Ok(g) => {
                    self.known.insert(g.spec.name.clone(), g);
                    return Ok(());
                }
                Err(e @ (CloudError::Conflict(_) | CloudError::Busy(_))) => e,
                Err(e) => return Err((step.to_string(), e)),
            };
            // Created by an earlier, interrupted attempt (whose answer was lost): adopt
            // it when it is the group asked for. Not there and busy: send it again.
            let existing = api
                .get_group(cluster, &d.name)
                .await
                .map_err(|e| (step.to_string(), e))?;
            match (existing, refusal) {
                (Some(g), _) if roll_reasons(d, &g).is_empty() => {
                    self.known.insert(g.spec.name.clone(), g);
                    return Ok(());
                }
                (None, CloudError::Busy(msg)) => {
                    self.busy_pause(step, refused, msg, timeout).await?;
                    refused += 1;
                }
                (_, refusal) => return Err((step.to_string(), refusal)),
            }
        }
    }

    /// `d` starting with as many nodes as the live group of its capacity type that it
    /// replaces (one not `wanted`, deleted once `d` is ready), so a roll keeps the pool's
    /// node count instead of dropping to `min`; unchanged when `d` sets its own count.
    fn with_inherited_count(&self, d: &GroupSpec, wanted: &BTreeSet<&str>) -> GroupSpec {
        let mut d = d.clone();
        if d.scaling.desired.is_some() {
            return d;
        }
        let replaced = self
            .known
            .values()
            .filter(|g| !wanted.contains(g.name()) && g.spec.capacity == d.capacity)
            .map(|g| g.spec.scaling.desired.unwrap_or(g.spec.scaling.min))
            .max();
        if let Some(n) = replaced {
            d.scaling.desired = Some(n.clamp(d.scaling.min, d.scaling.max.max(d.scaling.min)));
        }
        d
    }

    /// Updates one live group in place to the whole of `d` (the adapter sends what
    /// differs), holding the cluster's turn; waits for `ACTIVE` before, and after when the
    /// cloud started an operation. Refused as busy: the group is read again, and the update
    /// from what it is then is sent after a pause.
    async fn update(&mut self, d: &GroupSpec, timeout: Duration) -> StepResult {
        let Some(l) = self.known.get(&d.name) else {
            return Ok(());
        };
        if l.status != NodeGroupStatus::Active {
            self.wait_active(&d.name, timeout).await?;
        }
        let Some(mut l) = self.known.get(&d.name).cloned() else {
            return Ok(());
        };
        if in_place_equal(d, &l.spec) {
            return Ok(());
        }
        let step = format!("updating {}", self.what(&d.name));
        let turn = self.turn(&step).await?;
        let (api, cluster) = (self.api, self.cluster);
        let mut refused = 0;
        let started = loop {
            let sent = self
                .journal
                .run(
                    Verb::Update,
                    &self.target(&d.name),
                    api.update_group(cluster, &l, d),
                )
                .await;
            match sent {
                Ok(started) => break started,
                Err(CloudError::Busy(msg)) => {
                    self.busy_pause(&step, refused, msg, timeout).await?;
                    refused += 1;
                    l = match api.get_group(cluster, &d.name).await {
                        Ok(Some(g)) => g,
                        Ok(None) => {
                            return Err((step, CloudError::NotFound(self.what(&d.name))));
                        }
                        Err(e) => return Err((step, e)),
                    };
                    self.known.insert(d.name.clone(), l.clone());
                    if l.status != NodeGroupStatus::Active {
                        self.wait_active(&d.name, timeout).await?;
                        if let Some(g) = self.known.get(&d.name) {
                            l = g.clone();
                        }
                    }
                }
                Err(e) => return Err((step, e)),
            }
        };
        if started {
            self.wait_active(&d.name, timeout).await?;
        } else if let Some(g) = self.known.get_mut(&d.name) {
            g.spec.tags = d.tags.clone();
        }
        drop(turn);
        Ok(())
    }

    /// Starts deleting each of `names` (already gone is fine), then waits for each (one
    /// at a time, each holding the cluster's turn, where the cloud runs one operation per
    /// cluster).
    async fn delete_all(&mut self, names: &[String], timeout: Duration) -> StepResult {
        let serial = self.api.traits().serial_operations;
        let mut started = Vec::new();
        for n in names {
            self.touched.insert(n.clone());
            let step = format!("deleting {}", self.what(n));
            let turn = self.turn(&step).await?;
            if self.delete_one(n, &step, timeout).await? {
                if serial {
                    self.wait(n, WaitTarget::Deleted, timeout).await?;
                    self.known.remove(n);
                } else {
                    started.push(n);
                }
            }
            drop(turn);
        }
        for n in started {
            self.wait(n, WaitTarget::Deleted, timeout).await?;
            self.known.remove(n);
        }
        Ok(())
    }

    /// Sends the delete of `name` (again after a pause while the cloud is busy); `true`
    /// when a deletion is under way to wait for, `false` when the group is already gone.
    async fn delete_one(
        &mut self,
        name: &str,
        step: &str,
        timeout: Duration,
    ) -> Result<bool, (String, CloudError)> {
        let (api, cluster) = (self.api, self.cluster);
        let mut refused = 0;
        loop {
            let deleted = self
                .journal
                .run(
                    Verb::Delete,
                    &self.target(name),
                    api.delete_group(cluster, name),
                )
                .await;
            let refusal = match deleted {
                Ok(()) => return Ok(true),
                Err(CloudError::NotFound(_)) => {
                    self.known.remove(name);
                    return Ok(false);
                }
                Err(e @ (CloudError::Conflict(_) | CloudError::Busy(_))) => e,
                Err(e) => return Err((step.to_string(), e)),
            };
            // Already being deleted (an earlier attempt whose answer was lost, or an
            // interrupted run): wait for it like for our own delete.
            match api.get_group(cluster, name).await {
                Ok(Some(g)) if g.status == NodeGroupStatus::Deleting => return Ok(true),
                Ok(None) => {
                    self.known.remove(name);
                    return Ok(false);
                }
                Ok(Some(_)) => {}
                Err(e) => return Err((step.to_string(), e)),
            }
            match refusal {
                CloudError::Busy(msg) => {
                    self.busy_pause(step, refused, msg, timeout).await?;
                    refused += 1;
                }
                other => return Err((step.to_string(), other)),
            }
        }
    }

    async fn wait_active(&mut self, name: &str, timeout: Duration) -> StepResult {
        if let Some(g) = self.wait(name, WaitTarget::Active, timeout).await? {
            self.known.insert(g.spec.name.clone(), g);
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
        live.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
        let error = result.err().map(|(step, source)| ReconcileError {
            step,
            source,
            existing: live.iter().map(|g| g.spec.name.clone()).collect(),
        });
        Outcome {
            live,
            error,
            mutations: self.journal.entries(),
            waits: self.waits,
        }
    }
}

/// Why live group `live` cannot become `d` in place ([`drift::roll_reasons`], the one
/// decision plan and apply use); empty when it can (also how a group found on a create
/// conflict is known to be the one asked for).
fn roll_reasons(d: &GroupSpec, live: &NodeGroup) -> Vec<String> {
    if live.spec.capacity == CapacityType::Reserved {
        return vec!["it runs on reserved capacity, which a pool does not manage".into()];
    }
    drift::roll_reasons(&live.spec, d)
}

/// Whether `live` already is `d` in everything that changes in place.
fn in_place_equal(d: &GroupSpec, live: &GroupSpec) -> bool {
    let (add, remove) = tag_delta(&live.tags, &d.tags);
    ConfigDelta::between(live, d).is_empty() && add.is_empty() && remove.is_empty()
}

/// A short idempotency token for one group's create within one apply: the same seed and
/// name give the same token, so a create retried inside the apply is not a second group.
pub fn token(seed: &str, name: &str) -> String {
    format!("gputf-{:016x}-{:016x}", fnv1a(seed), fnv1a(name))
}

#[cfg(test)]
mod tests;
