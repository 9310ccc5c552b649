//! AKS agent pools over Azure Resource Manager REST: [`Aks`] implements [`NodeGroups`].
//!
//! Every call carries a token from [`auth::AzureCredentials`] (Azure's usual chain) and
//! goes through the crate's one retry policy (429 and 5xx, `Retry-After`). Creates,
//! updates and deletes are long-running: ARM answers at once with an
//! `Azure-AsyncOperation` URL, which [`NodeGroups::wait_until`] polls to a terminal
//! status before reading the pool. AKS runs one operation per cluster: a second one is
//! `409 OperationNotAllowed` ([`CloudError::Busy`]): this process queues its changes per
//! cluster ([`NodeGroups::take_turn`]) and `pool::reconcile` waits out the others'.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use super::arm::{Arm, Operation};
use super::convert;
use crate::seam::poll;
use crate::seam::turns::ClusterTurns;
use crate::seam::{
    CloudError, CloudTraits, ClusterRef, GroupSpec, NodeClass, NodeGroup, NodeGroupStatus,
    NodeGroups, Turn, WaitTarget,
};

/// The pinned stable api-version of `Microsoft.ContainerService` (it has `gpuProfile`).
pub const API_VERSION: &str = "2025-05-01";

/// The public cloud's Resource Manager endpoint.
pub const DEFAULT_ENDPOINT: &str = "https://management.azure.com";

/// The AKS agent pool adapter.
#[derive(Debug, Clone)]
pub struct Aks {
    arm: Arm,
    /// The operation each pool (by its ARM path) is waiting on, from the last create,
    /// update or delete, with the poll interval ARM asked for (`Retry-After`): what
    /// `wait_until` polls first.
    pending: Arc<Mutex<HashMap<String, Operation>>>,
}

impl Aks {
    /// A client over `arm` (made by [`super::AzureSession::aks`]); no request is made.
    pub(super) fn new(arm: Arm) -> Self {
        Aks {
            arm,
            pending: Arc::default(),
        }
    }

    /// The ARM path of pool `name` in `cluster` (or of the pool list without a name).
    fn pool_path(cluster: &ClusterRef, name: Option<&str>) -> Result<String, CloudError> {
        if !matches!(cluster, ClusterRef::Aks { .. }) {
            return Err(CloudError::Invalid(format!(
                "{cluster} is not an AKS cluster"
            )));
        }
        Ok(match name {
            Some(n) => format!("{}/agentPools/{n}", cluster.id()),
            None => format!("{}/agentPools", cluster.id()),
        })
    }

    /// The URL of ARM path `path` at the pinned api-version.
    fn url(&self, path: &str) -> String {
        self.arm.url(path, API_VERSION)
    }

    /// Remembers the operation a mutation of pool `path` started.
    fn track(&self, path: &str, operation: Option<Operation>) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        match operation {
            Some(op) => pending.insert(path.to_string(), op),
            None => pending.remove(path),
        };
    }

    /// Polls the operation pool `path` is waiting on (if any) to a terminal status.
    async fn finish_operation(&self, path: &str, timeout: Duration) -> Result<(), CloudError> {
        let op = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(path)
            .cloned();
        let Some(op) = op else { return Ok(()) };
        let done = self.arm.wait(&op, path, timeout).await;
        if !matches!(
            done,
            Err(CloudError::Timeout { .. } | CloudError::Cancelled(_))
        ) {
            self.track(path, None);
        }
        done
    }
}

#[async_trait::async_trait]
impl NodeGroups for Aks {
    /// AKS runs one agent-pool operation per cluster: this process's changes to a cluster
    /// queue behind each other ([`ClusterTurns::process`]).
    async fn take_turn(&self, cluster: &ClusterRef) -> Result<Turn, CloudError> {
        ClusterTurns::process()
            .take(cluster, &self.arm.pace, &self.arm.cancel)
            .await
    }

    async fn pause(&self, pause: Duration) -> Result<(), CloudError> {
        poll::pause(&self.arm.pace, &self.arm.cancel, pause).await
    }

    fn now(&self) -> Duration {
        self.arm.pace.now()
    }

    fn traits(&self) -> &'static CloudTraits {
        &super::rules::AKS
    }

    async fn create_group(
        &self,
        cluster: &ClusterRef,
        spec: &GroupSpec,
        _token: &str,
    ) -> Result<NodeGroup, CloudError> {
        super::rules::AKS
            .check_group(spec)
            .map_err(CloudError::Invalid)?;
        let path = Self::pool_path(cluster, Some(&spec.name))?;
        let body = convert::to_arm(spec, None)?;
        // `If-None-Match: *`: a pool of that name already there is a conflict, not an
        // overwrite (ARM answers 412).
        let a = self
            .arm
            .call(
                Method::PUT,
                &self.url(&path),
                Some(&body),
                &[("If-None-Match", "*")],
                &format!("create agent pool {}", spec.name),
            )
            .await
            .map_err(|e| match e {
                CloudError::Conflict(m) if m.contains("PreconditionFailed") => {
                    CloudError::Conflict(format!("agent pool {} already exists ({m})", spec.name))
                }
                other => other,
            })?;
        self.track(&path, a.operation);
        convert::from_arm(&a.body)
    }

    async fn get_group(
        &self,
        cluster: &ClusterRef,
        name: &str,
    ) -> Result<Option<NodeGroup>, CloudError> {
        let path = Self::pool_path(cluster, Some(name))?;
        match self
            .arm
            .call(
                Method::GET,
                &self.url(&path),
                None,
                &[],
                &format!("read agent pool {name}"),
            )
            .await
        {
            Ok(a) => convert::from_arm(&a.body).map(Some),
            Err(CloudError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn update_group(
        &self,
        cluster: &ClusterRef,
        live: &NodeGroup,
        want: &GroupSpec,
    ) -> Result<bool, CloudError> {
        let resolved = want.scaling.resolved_against(Some(live.spec.scaling));
        let have = &live.spec;
        if have.labels == want.labels
            && have.taints == want.taints
            && have.tags == want.tags
            && (have.scaling.min, have.scaling.max, have.scaling.desired)
                == (resolved.min, resolved.max, resolved.desired)
        {
            return Ok(false);
        }
        // ARM's PUT is the whole pool: what the pool cannot change is sent as it is.
        let mut body_spec = want.clone();
        if let (NodeClass::Azure(w), NodeClass::Azure(h)) = (&mut body_spec.class, &have.class) {
            if w.subnet.is_none() {
                w.subnet = h.subnet.clone();
            }
            if w.zones.is_empty() {
                w.zones = h.zones.clone();
            }
        }
        let path = Self::pool_path(cluster, Some(&want.name))?;
        let body = convert::to_arm(&body_spec, Some(have.scaling))?;
        let a = self
            .arm
            .call(
                Method::PUT,
                &self.url(&path),
                Some(&body),
                &[],
                &format!("update agent pool {}", want.name),
            )
            .await?;
        self.track(&path, a.operation);
        Ok(true)
    }

    /// AKS's own count: an agent pool that has `Succeeded` has `count` VMs (its
    /// autoscaler keeps `count` at the current size); while it changes, no count.
    async fn nodes_up(
        &self,
        _cluster: &ClusterRef,
        group: &NodeGroup,
    ) -> Result<Option<u32>, CloudError> {
        Ok((group.status == NodeGroupStatus::Active)
            .then_some(group.spec.scaling.desired)
            .flatten())
    }

    async fn cluster_region(&self, cluster: &ClusterRef) -> Result<Option<String>, CloudError> {
        Self::pool_path(cluster, None)?;
        let a = self
            .arm
            .call(
                Method::GET,
                &self.url(&cluster.id()),
                None,
                &[],
                "read the managed cluster",
            )
            .await?;
        Ok(a.body
            .get("location")
            .and_then(Value::as_str)
            .map(str::to_string))
    }

    async fn list_groups(&self, cluster: &ClusterRef) -> Result<Vec<String>, CloudError> {
        let mut url = self.url(&Self::pool_path(cluster, None)?);
        let mut names = Vec::new();
        loop {
            let a = self
                .arm
                .call(Method::GET, &url, None, &[], "list agent pools")
                .await?;
            if let Some(items) = a.body.get("value").and_then(Value::as_array) {
                names.extend(
                    items
                        .iter()
                        .filter_map(|p| p.get("name").and_then(Value::as_str))
                        .map(str::to_string),
                );
            }
            match a.body.get("nextLink").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => url = next.to_string(),
                _ => return Ok(names),
            }
        }
    }

    async fn delete_group(&self, cluster: &ClusterRef, name: &str) -> Result<(), CloudError> {
        let path = Self::pool_path(cluster, Some(name))?;
        let a = self
            .arm
            .call(
                Method::DELETE,
                &self.url(&path),
                None,
                &[],
                &format!("delete agent pool {name}"),
            )
            .await?;
        if a.status == 204 {
            return Err(CloudError::NotFound(format!("agent pool {name}")));
        }
        self.track(&path, a.operation);
        Ok(())
    }

    async fn wait_until(
        &self,
        cluster: &ClusterRef,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError> {
        let start = self.arm.pace.now();
        let path = Self::pool_path(cluster, Some(name))?;
        self.finish_operation(&path, timeout).await?;
        poll::group(
            &self.arm.pace,
            self.arm.backoff,
            timeout.saturating_sub(self.arm.pace.since(start)),
            &self.arm.cancel,
            &super::rules::AKS,
            cluster,
            name,
            target,
            || self.get_group(cluster, name),
        )
        .await
    }
}
