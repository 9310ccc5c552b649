//! An in-memory [`NodeGroups`] for unit tests of code built on the trait, serving the
//! rules of any of the three clouds ([`FakeNodeGroups::for_cloud`]), so core tests cover
//! the AKS and GKE layouts before their HTTP adapters exist.
//!
//! Behaves like the clouds where it matters to callers: the cloud's name rule and machine
//! types per group ([`CloudTraits::check_group`]); names unique per cluster; a create
//! retried with the same token and group returns the existing group; updates need an
//! `Active` group; on AKS only one operation runs per cluster (`Conflict` otherwise, like
//! ARM's 409 `OperationNotAllowed`); the cloud adds its own labels, taints and tags, and
//! reads strip them; groups pass through `Creating`/`Updating`/`Deleting` for a
//! configurable number of polls; errors can be injected per operation.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::cancel::Cancel;
use crate::offer::Cloud;
use crate::seam::delta::{ConfigDelta, tag_delta};
use crate::seam::poll::{Backoff, Clock, VirtualClock};
use crate::seam::{
    CapacityType, CloudError, CloudTraits, ClusterRef, GroupSpec, HealthIssue, NodeClass,
    NodeGroup, NodeGroupStatus, NodeGroups, Taint, TaintEffect, WaitTarget,
};

/// The trait operation a call or injected fault is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `create_group`.
    Create,
    /// `get_group` (also each poll of a wait).
    Get,
    /// `update_group`.
    Update,
    /// `delete_group`.
    Delete,
    /// `list_groups` (recorded with an empty name).
    List,
}

/// One recorded call: operation, cluster id, group name.
pub type Call = (Op, String, String);

#[derive(Debug)]
struct Entry {
    /// The group as the cloud holds it, its own labels, taints and tags included.
    group: NodeGroup,
    /// What was asked for and the token, for idempotent retries.
    asked: (GroupSpec, String),
    /// Gets left before a transitional status settles.
    pending: u32,
}

#[derive(Debug, Default)]
struct State {
    groups: BTreeMap<(String, String), Entry>,
    clusters: Option<BTreeSet<String>>,
    subnets: BTreeMap<String, Vec<String>>,
    /// Faults in order: the operation, how many of its calls still succeed first, the error.
    faults: Vec<(Op, u32, CloudError)>,
    calls: Vec<Call>,
    seq: u64,
    /// Nodes up per group name where a test says fewer than the group's count.
    nodes_up: BTreeMap<String, u32>,
}

/// In-memory node groups; see the module docs for the behaviour.
#[derive(Debug)]
pub struct FakeNodeGroups {
    state: Mutex<State>,
    settle_after: u32,
    /// Creates settle after this many gets instead (a floor slow to come up).
    create_settle_after: Option<u32>,
    traits: &'static CloudTraits,
    /// The time its waits see: it moves only when they sleep.
    clock: VirtualClock,
    /// Whose turn it is at each cluster (clouds with serial operations).
    #[cfg(feature = "live")]
    turns: crate::seam::turns::ClusterTurns,
}

impl Default for FakeNodeGroups {
    fn default() -> Self {
        Self::for_cloud(Cloud::Aws)
    }
}

impl FakeNodeGroups {
    /// A fake EKS where every cluster exists and groups are `Active` at once (like moto).
    pub fn new() -> Self {
        Self::default()
    }

    /// A fake of `cloud`'s groups (AWS, Azure or GCP; a cloud without node groups panics: a
    /// test that asks for one is wrong).
    pub fn for_cloud(cloud: Cloud) -> Self {
        FakeNodeGroups {
            state: Mutex::default(),
            settle_after: 0,
            create_settle_after: None,
            traits: crate::registry::node_group_rules(cloud).unwrap_or_else(|| {
                panic!("{cloud} has no node groups: the fake serves aws, azure and gcp")
            }),
            clock: VirtualClock::default(),
            #[cfg(feature = "live")]
            turns: crate::seam::turns::ClusterTurns::default(),
        }
    }

    /// Groups stay in `Creating`/`Updating`/`Deleting` for `polls` gets.
    pub fn with_settle_after(mut self, polls: u32) -> Self {
        self.settle_after = polls;
        self
    }

    /// Created groups stay `Creating` for `polls` gets (other changes settle as set by
    /// [`FakeNodeGroups::with_settle_after`]): a place slow to bring nodes up.
    pub fn with_slow_creates(mut self, polls: u32) -> Self {
        self.create_settle_after = Some(polls);
        self
    }

    /// Only these clusters exist (by [`ClusterRef::id`]); creates elsewhere fail with
    /// `NotFound`.
    pub fn with_clusters<I: IntoIterator<Item = S>, S: Into<String>>(self, ids: I) -> Self {
        self.lock().clusters = Some(ids.into_iter().map(Into::into).collect());
        self
    }

    /// Only `up` nodes of group `name` are up (by default an `Active` group has its
    /// desired count up, one changing none).
    pub fn set_nodes_up(&self, name: &str, up: u32) {
        self.lock().nodes_up.insert(name.to_string(), up);
    }

    /// The next call of `op` fails with `err` (faults queue up in order).
    pub fn inject(&self, op: Op, err: CloudError) {
        self.inject_after(op, 0, err);
    }

    /// The call of `op` after the next `successes` ones fails with `err`.
    pub fn inject_after(&self, op: Op, successes: u32, err: CloudError) {
        self.lock().faults.push((op, successes, err));
    }

    /// The subnets an EKS group without its own gets in `cluster` (default: one subnet
    /// named after the cluster).
    pub fn set_cluster_subnets(&self, cluster: &ClusterRef, subnets: Vec<String>) {
        self.lock().subnets.insert(cluster.id(), subnets);
    }

    /// Forces a group's status and health (sticky: it no longer settles by itself).
    pub fn set_status(
        &self,
        cluster: &ClusterRef,
        name: &str,
        status: NodeGroupStatus,
        health: Vec<HealthIssue>,
    ) {
        if let Some(e) = self.lock().groups.get_mut(&key(cluster, name)) {
            e.group.status = status;
            e.group.health = health;
            e.pending = 0;
        }
    }

    /// Changes a group's tags behind the pool's back (drift in tests).
    pub fn set_tags(&self, cluster: &ClusterRef, name: &str, tags: BTreeMap<String, String>) {
        if let Some(e) = self.lock().groups.get_mut(&key(cluster, name)) {
            e.group.spec.tags = tags;
        }
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// All groups as they stand now, as the cloud holds them (its own labels, taints and
    /// tags included; no poll is counted).
    pub fn groups(&self) -> Vec<NodeGroup> {
        self.lock()
            .groups
            .values()
            .map(|e| e.group.clone())
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic in another test thread must not hide this one's result.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the call and pops an injected fault for it, if any.
    fn enter(
        &self,
        op: Op,
        cluster: &ClusterRef,
        name: &str,
    ) -> Result<MutexGuard<'_, State>, CloudError> {
        let mut st = self.lock();
        st.calls.push((op, cluster.id(), name.to_string()));
        if let Some(i) = st.faults.iter().position(|(o, _, _)| *o == op) {
            if st.faults[i].1 > 0 {
                st.faults[i].1 -= 1;
            } else {
                let (_, _, err) = st.faults.remove(i);
                return Err(err);
            }
        }
        Ok(st)
    }

    /// The cluster must be of this fake's cloud and exist.
    fn check_cluster(&self, st: &State, cluster: &ClusterRef) -> Result<(), CloudError> {
        if cluster.cloud() != self.traits.cloud {
            return Err(CloudError::Invalid(format!(
                "{cluster} is not a cluster of this {}",
                self.traits.kind()
            )));
        }
        if let Some(c) = &st.clusters
            && !c.contains(&cluster.id())
        {
            return Err(CloudError::NotFound(format!("cluster {cluster}")));
        }
        Ok(())
    }

    /// On a cloud with serial operations, refuses a change while another runs.
    fn check_no_operation(&self, st: &State, cluster: &ClusterRef) -> Result<(), CloudError> {
        if !self.traits.serial_operations {
            return Ok(());
        }
        let id = cluster.id();
        let busy = st.groups.iter().find(|((c, _), e)| {
            *c == id
                && matches!(
                    e.group.status,
                    NodeGroupStatus::Creating
                        | NodeGroupStatus::Updating
                        | NodeGroupStatus::Deleting
                )
        });
        match busy {
            Some(((_, n), _)) => Err(CloudError::Busy(format!(
                "OperationNotAllowed: another operation (on {n}) is in progress in {cluster}"
            ))),
            None => Ok(()),
        }
    }

    /// The group as this cloud would hold it: its own labels, taints and tags added.
    fn as_held(&self, mut spec: GroupSpec, cluster: &ClusterRef, st: &State) -> GroupSpec {
        match &mut spec.class {
            NodeClass::Aws(c) => {
                if c.subnets.is_none() {
                    c.subnets = Some(
                        st.subnets
                            .get(&cluster.id())
                            .cloned()
                            .unwrap_or_else(|| vec![format!("subnet-{}", cluster.name())]),
                    );
                }
                spec.tags
                    .insert("aws:eks:cluster-name".into(), cluster.name().into());
            }
            NodeClass::Azure(_) => {
                spec.labels
                    .insert("kubernetes.azure.com/agentpool".into(), spec.name.clone());
                if spec.capacity == CapacityType::Spot {
                    spec.labels.insert(
                        "kubernetes.azure.com/scalesetpriority".into(),
                        "spot".into(),
                    );
                    spec.taints.push(Taint {
                        key: "kubernetes.azure.com/scalesetpriority".into(),
                        value: "spot".into(),
                        effect: TaintEffect::NoSchedule,
                    });
                }
                spec.tags
                    .insert("aks-managed-poolName".into(), spec.name.clone());
            }
            NodeClass::Gcp(_) => {
                spec.labels
                    .insert("cloud.google.com/gke-nodepool".into(), spec.name.clone());
                spec.taints.push(Taint {
                    key: "nvidia.com/gpu".into(),
                    value: "present".into(),
                    effect: TaintEffect::NoSchedule,
                });
                spec.tags
                    .insert("goog-gke-node-pool-provisioning-model".into(), "x".into());
            }
        }
        spec.taints.sort();
        spec.taints.dedup();
        spec
    }

    /// The group as a read returns it: the cloud's own labels, taints and tags stripped.
    fn as_read(&self, g: &NodeGroup) -> NodeGroup {
        let mut g = g.clone();
        self.traits.strip_system(&mut g.spec);
        g
    }

    fn id_of(&self, cluster: &ClusterRef, name: &str, seq: u64) -> String {
        match self.traits.cloud {
            Cloud::Azure => format!("{}/agentPools/{name}", cluster.id()),
            Cloud::Gcp => format!("{}/nodePools/{name}", cluster.id()),
            _ => format!("arn:fake:eks:::nodegroup/{}/{name}/{seq}", cluster.name()),
        }
    }
}

fn key(cluster: &ClusterRef, name: &str) -> (String, String) {
    (cluster.id(), name.to_string())
}

fn not_found(cluster: &ClusterRef, name: &str) -> CloudError {
    CloudError::NotFound(format!("group {name} in cluster {cluster}"))
}

#[async_trait::async_trait]
impl NodeGroups for FakeNodeGroups {
    /// Where the cloud runs one operation per cluster, the fake's own queues (shared by
    /// everything using this fake, as a provider process's adapters share theirs).
    #[cfg(feature = "live")]
    async fn take_turn(&self, cluster: &ClusterRef) -> Result<crate::seam::Turn, CloudError> {
        if !self.traits.serial_operations {
            return Ok(crate::seam::Turn::free());
        }
        self.turns.take(cluster, &self.clock, &Cancel::new()).await
    }

    /// Advances the virtual clock.
    fn now(&self) -> Duration {
        self.clock.now()
    }

    async fn pause(&self, pause: Duration) -> Result<(), CloudError> {
        self.clock.sleep(pause).await;
        Ok(())
    }

    fn traits(&self) -> &'static CloudTraits {
        self.traits
    }

    async fn create_group(
        &self,
        cluster: &ClusterRef,
        spec: &GroupSpec,
        token: &str,
    ) -> Result<NodeGroup, CloudError> {
        let mut st = self.enter(Op::Create, cluster, &spec.name)?;
        self.traits.check_group(spec).map_err(CloudError::Invalid)?;
        self.check_cluster(&st, cluster)?;
        let k = key(cluster, &spec.name);
        if let Some(e) = st.groups.get(&k) {
            if !token.is_empty() && e.asked == (spec.clone(), token.to_string()) {
                return Ok(self.as_read(&e.group));
            }
            return Err(CloudError::Conflict(format!(
                "group {} already exists in cluster {cluster}",
                spec.name
            )));
        }
        self.check_no_operation(&st, cluster)?;
        st.seq += 1;
        let mut held = self.as_held(spec.clone(), cluster, &st);
        held.scaling = held.scaling.resolved_against(None);
        let group = NodeGroup {
            id: self.id_of(cluster, &spec.name, st.seq),
            status: match self.create_settle_after.unwrap_or(self.settle_after) {
                0 => NodeGroupStatus::Active,
                _ => NodeGroupStatus::Creating,
            },
            spec: held,
            kubernetes_version: None,
            health: Vec::new(),
        };
        let read = self.as_read(&group);
        st.groups.insert(
            k,
            Entry {
                group,
                asked: (spec.clone(), token.to_string()),
                pending: self.create_settle_after.unwrap_or(self.settle_after),
            },
        );
        Ok(read)
    }

    async fn get_group(
        &self,
        cluster: &ClusterRef,
        name: &str,
    ) -> Result<Option<NodeGroup>, CloudError> {
        let mut st = self.enter(Op::Get, cluster, name)?;
        let k = key(cluster, name);
        let Some(e) = st.groups.get_mut(&k) else {
            return Ok(None);
        };
        if e.pending > 0 {
            e.pending -= 1;
            if e.pending == 0 {
                match e.group.status {
                    NodeGroupStatus::Creating | NodeGroupStatus::Updating => {
                        e.group.status = NodeGroupStatus::Active;
                    }
                    NodeGroupStatus::Deleting => {
                        st.groups.remove(&k);
                        return Ok(None);
                    }
                    _ => {}
                }
            }
        }
        Ok(Some(self.as_read(&e.group)))
    }

    /// The fake is the cloud: it compares with what it holds, not with `_live`.
    async fn update_group(
        &self,
        cluster: &ClusterRef,
        _live: &NodeGroup,
        spec: &GroupSpec,
    ) -> Result<bool, CloudError> {
        let mut st = self.enter(Op::Update, cluster, &spec.name)?;
        spec.scaling.check().map_err(CloudError::Invalid)?;
        let status = st
            .groups
            .get(&key(cluster, &spec.name))
            .map(|e| e.group.status.clone())
            .ok_or_else(|| not_found(cluster, &spec.name))?;
        if status != NodeGroupStatus::Active {
            return Err(CloudError::Conflict(format!(
                "group {} is {status}, not active",
                spec.name
            )));
        }
        self.check_no_operation(&st, cluster)?;
        let traits = self.traits;
        let e = st
            .groups
            .get_mut(&key(cluster, &spec.name))
            .ok_or_else(|| not_found(cluster, &spec.name))?;
        let mut live = e.group.spec.clone();
        traits.strip_system(&mut live);
        let delta = ConfigDelta::between(&live, spec);
        let (add, remove) = tag_delta(&live.tags, &spec.tags);
        delta.apply_to(&mut e.group.spec);
        e.group.spec.tags.extend(add);
        for k in &remove {
            e.group.spec.tags.remove(k);
        }
        if delta.is_empty() {
            return Ok(false);
        }
        e.group.status = if self.settle_after == 0 {
            NodeGroupStatus::Active
        } else {
            NodeGroupStatus::Updating
        };
        e.pending = self.settle_after;
        Ok(true)
    }

    async fn nodes_up(
        &self,
        _cluster: &ClusterRef,
        group: &NodeGroup,
    ) -> Result<Option<u32>, CloudError> {
        if group.status != NodeGroupStatus::Active {
            return Ok(Some(0));
        }
        let count = group.spec.scaling.desired.unwrap_or(group.spec.scaling.min);
        let up = self.lock().nodes_up.get(group.name()).copied();
        Ok(Some(up.unwrap_or(count).min(count)))
    }

    async fn list_groups(&self, cluster: &ClusterRef) -> Result<Vec<String>, CloudError> {
        let st = self.enter(Op::List, cluster, "")?;
        self.check_cluster(&st, cluster)?;
        let id = cluster.id();
        Ok(st
            .groups
            .keys()
            .filter(|(c, _)| *c == id)
            .map(|(_, n)| n.clone())
            .collect())
    }

    async fn delete_group(&self, cluster: &ClusterRef, name: &str) -> Result<(), CloudError> {
        let mut st = self.enter(Op::Delete, cluster, name)?;
        let k = key(cluster, name);
        if !st.groups.contains_key(&k) {
            return Err(not_found(cluster, name));
        }
        if st
            .groups
            .get(&k)
            .is_some_and(|e| e.group.status != NodeGroupStatus::Deleting)
        {
            self.check_no_operation(&st, cluster)?;
        }
        if self.settle_after == 0 {
            st.groups.remove(&k);
        } else if let Some(e) = st.groups.get_mut(&k) {
            e.group.status = NodeGroupStatus::Deleting;
            e.pending = self.settle_after;
        }
        Ok(())
    }

    async fn wait_until(
        &self,
        cluster: &ClusterRef,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError> {
        // The adapters' own wait loop, on a virtual clock (a group settles after
        // `settle_after` polls, whatever the time; sleeping takes no time).
        crate::seam::poll::group(
            &self.clock,
            Backoff::default(),
            timeout,
            &Cancel::new(),
            self.traits,
            cluster,
            name,
            target,
            || self.get_group(cluster, name),
        )
        .await
    }
}

#[cfg(test)]
mod tests;
