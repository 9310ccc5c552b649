//! An in-memory [`NodeGroups`] for unit tests of code built on the trait.
//!
//! Behaves like EKS where it matters to callers: names are unique per cluster, a create
//! retried with the same token and request returns the existing group, updates need an
//! `Active` group, groups pass through `Creating`/`Updating`/`Deleting` for a
//! configurable number of polls, and errors can be injected per operation.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::poll::{Backoff, VirtualClock};
use super::{
    CloudError, HealthIssue, NodeGroup, NodeGroupRequest, NodeGroupStatus, NodeGroupUpdate,
    NodeGroups, WaitTarget,
};
use crate::cancel::Cancel;

/// The trait operation a call or injected fault is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `create_node_group`.
    Create,
    /// `describe_node_group` (also each poll of a wait).
    Describe,
    /// `update_node_group_config`.
    Update,
    /// `delete_node_group`.
    Delete,
    /// `tag_node_group` (recorded with an empty cluster and the ARN as the name).
    Tag,
    /// `cluster_subnets` (recorded with an empty name).
    DescribeCluster,
    /// `list_node_groups` (recorded with an empty name).
    List,
}

/// One recorded call: operation, cluster, node group name.
pub type Call = (Op, String, String);

#[derive(Debug)]
struct Entry {
    group: NodeGroup,
    request: NodeGroupRequest,
    /// Describes left before a transitional status settles.
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
}

/// In-memory node groups; see the module docs for the behaviour.
#[derive(Debug, Default)]
pub struct FakeNodeGroups {
    state: Mutex<State>,
    settle_after: u32,
    /// The time its waits see: it moves only when they sleep.
    clock: VirtualClock,
}

impl FakeNodeGroups {
    /// A fake where every cluster exists and groups are `Active` at once (like moto).
    pub fn new() -> Self {
        Self::default()
    }

    /// Groups stay in `Creating`/`Updating`/`Deleting` for `polls` describes.
    pub fn with_settle_after(mut self, polls: u32) -> Self {
        self.settle_after = polls;
        self
    }

    /// Only these clusters exist; creates elsewhere fail with `NotFound`.
    pub fn with_clusters<I: IntoIterator<Item = S>, S: Into<String>>(self, names: I) -> Self {
        self.lock().clusters = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// The next call of `op` fails with `err` (faults queue up in order).
    pub fn inject(&self, op: Op, err: CloudError) {
        self.inject_after(op, 0, err);
    }

    /// The call of `op` after the next `successes` ones fails with `err`.
    pub fn inject_after(&self, op: Op, successes: u32, err: CloudError) {
        self.lock().faults.push((op, successes, err));
    }

    /// The subnets `cluster_subnets` reports for `cluster` (none until set).
    pub fn set_cluster_subnets(&self, cluster: &str, subnets: Vec<String>) {
        self.lock().subnets.insert(cluster.to_string(), subnets);
    }

    /// Forces a group's status and health (sticky: it no longer settles by itself).
    pub fn set_status(
        &self,
        cluster: &str,
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

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// All groups as they stand now (no poll is counted).
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
        cluster: &str,
        name: &str,
    ) -> Result<MutexGuard<'_, State>, CloudError> {
        let mut st = self.lock();
        st.calls.push((op, cluster.to_string(), name.to_string()));
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

    fn transitional(&self, settled: NodeGroupStatus, busy: NodeGroupStatus) -> NodeGroupStatus {
        if self.settle_after == 0 {
            settled
        } else {
            busy
        }
    }
}

fn key(cluster: &str, name: &str) -> (String, String) {
    (cluster.to_string(), name.to_string())
}

fn not_found(cluster: &str, name: &str) -> CloudError {
    CloudError::NotFound(format!("node group {name} in cluster {cluster}"))
}

#[async_trait::async_trait]
impl NodeGroups for FakeNodeGroups {
    async fn create_node_group(&self, req: &NodeGroupRequest) -> Result<NodeGroup, CloudError> {
        let mut st = self.enter(Op::Create, &req.cluster, &req.name)?;
        req.validate()?;
        if let Some(c) = &st.clusters
            && !c.contains(&req.cluster)
        {
            return Err(CloudError::NotFound(format!("cluster {}", req.cluster)));
        }
        let k = key(&req.cluster, &req.name);
        if let Some(e) = st.groups.get(&k) {
            if req.client_request_token.is_some() && e.request == *req {
                return Ok(e.group.clone());
            }
            return Err(CloudError::Conflict(format!(
                "node group {} already exists in cluster {}",
                req.name, req.cluster
            )));
        }
        st.seq += 1;
        let group = NodeGroup {
            cluster: req.cluster.clone(),
            name: req.name.clone(),
            arn: format!(
                "arn:fake:eks:::nodegroup/{}/{}/{}",
                req.cluster, req.name, st.seq
            ),
            status: self.transitional(NodeGroupStatus::Active, NodeGroupStatus::Creating),
            capacity_type: req.capacity_type,
            instance_types: req.instance_types.clone(),
            ami_type: req.ami_type.clone(),
            scaling: req.scaling,
            labels: req.labels.clone(),
            taints: req.taints.clone(),
            tags: req.tags.clone(),
            node_role_arn: req.node_role_arn.clone(),
            subnets: req.subnets.clone(),
            kubernetes_version: None,
            health: Vec::new(),
        };
        st.groups.insert(
            k,
            Entry {
                group: group.clone(),
                request: req.clone(),
                pending: self.settle_after,
            },
        );
        Ok(group)
    }

    async fn describe_node_group(
        &self,
        cluster: &str,
        name: &str,
    ) -> Result<Option<NodeGroup>, CloudError> {
        let mut st = self.enter(Op::Describe, cluster, name)?;
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
        Ok(Some(e.group.clone()))
    }

    async fn update_node_group_config(
        &self,
        cluster: &str,
        name: &str,
        update: &NodeGroupUpdate,
    ) -> Result<(), CloudError> {
        let mut st = self.enter(Op::Update, cluster, name)?;
        if let Some(s) = &update.scaling {
            s.check().map_err(CloudError::Invalid)?;
        }
        let e = st
            .groups
            .get_mut(&key(cluster, name))
            .ok_or_else(|| not_found(cluster, name))?;
        if e.group.status != NodeGroupStatus::Active {
            return Err(CloudError::Conflict(format!(
                "node group {name} is {}, not ACTIVE",
                e.group.status
            )));
        }
        if update.is_empty() {
            return Err(CloudError::Invalid("the update changes nothing".into()));
        }
        let g = &mut e.group;
        if let Some(s) = update.scaling {
            g.scaling = s;
        }
        g.labels.extend(update.labels_add.clone());
        for k in &update.labels_remove {
            g.labels.remove(k);
        }
        for t in update.taints_add.iter().chain(&update.taints_remove) {
            g.taints
                .retain(|x| !(x.key == t.key && x.effect == t.effect));
        }
        g.taints.extend(update.taints_add.iter().cloned());
        g.status = self.transitional(NodeGroupStatus::Active, NodeGroupStatus::Updating);
        e.pending = self.settle_after;
        Ok(())
    }

    async fn tag_node_group(
        &self,
        arn: &str,
        add: &BTreeMap<String, String>,
        remove: &[String],
    ) -> Result<(), CloudError> {
        let mut st = self.enter(Op::Tag, "", arn)?;
        let e = st
            .groups
            .values_mut()
            .find(|e| e.group.arn == arn)
            .ok_or_else(|| CloudError::NotFound(format!("resource {arn}")))?;
        e.group.tags.extend(add.clone());
        for k in remove {
            e.group.tags.remove(k);
        }
        Ok(())
    }

    async fn cluster_subnets(&self, cluster: &str) -> Result<Vec<String>, CloudError> {
        let st = self.enter(Op::DescribeCluster, cluster, "")?;
        if let Some(c) = &st.clusters
            && !c.contains(cluster)
        {
            return Err(CloudError::NotFound(format!("cluster {cluster}")));
        }
        Ok(st.subnets.get(cluster).cloned().unwrap_or_default())
    }

    async fn list_node_groups(&self, cluster: &str) -> Result<Vec<String>, CloudError> {
        let st = self.enter(Op::List, cluster, "")?;
        if let Some(c) = &st.clusters
            && !c.contains(cluster)
        {
            return Err(CloudError::NotFound(format!("cluster {cluster}")));
        }
        Ok(st
            .groups
            .values()
            .filter(|e| e.group.cluster == cluster)
            .map(|e| e.group.name.clone())
            .collect())
    }

    async fn delete_node_group(&self, cluster: &str, name: &str) -> Result<(), CloudError> {
        let mut st = self.enter(Op::Delete, cluster, name)?;
        let k = key(cluster, name);
        if !st.groups.contains_key(&k) {
            return Err(not_found(cluster, name));
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
        cluster: &str,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError> {
        // The adapters' own wait loop, on a virtual clock (a group settles after
        // `settle_after` polls, whatever the time; sleeping takes no time).
        super::poll::until(
            &self.clock,
            Backoff::default(),
            timeout,
            &Cancel::new(),
            &super::poll::wait_what(cluster, name, target),
            || async {
                let got = self.describe_node_group(cluster, name).await?;
                super::poll::wait_step(cluster, name, target, got)
            },
        )
        .await
    }
}

#[cfg(test)]
mod tests;
