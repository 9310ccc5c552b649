//! GKE node pools through the Container API v1 REST
//! (`projects/{p}/locations/{l}/clusters/{c}/nodePools`): [`Gke`] implements
//! [`NodeGroups`].
//!
//! Every mutation (create, `setSize`, `setAutoscaling`, update, delete) answers an
//! operation, and GKE runs one operation per cluster at a time (another mutation meanwhile
//! is 400 `FAILED_PRECONDITION` "Cluster is running incompatible operation", typed
//! [`CloudError::Busy`]; this process queues its changes per cluster,
//! [`NodeGroups::take_turn`]). The adapter remembers the operation a call started and
//! [`NodeGroups::wait_until`] polls it to `DONE` (surfacing its error) before it polls the
//! pool; an update that needs several operations waits for each but the last itself.
//! Credentials: [`auth`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use super::convert::{self, NodePool, NodeTaint};
use super::operations::{self, Operation, Pending};
use super::rest::Rest;
use crate::cancel::Cancel;
use crate::seam::poll::{self, Backoff};
use crate::seam::turns::ClusterTurns;
use crate::seam::{
    CloudError, CloudTraits, ClusterRef, GroupSpec, NodeClass, NodeGroup, NodeGroups, Turn,
    WaitTarget,
};

/// The GKE node pool adapter.
#[derive(Debug, Clone)]
pub struct Gke {
    rest: Rest,
    /// Compute Engine, for the pools' managed instance groups (nodes up).
    compute: Option<Rest>,
    backoff: Backoff,
    operation_timeout: Duration,
    cancel: Cancel,
    /// The last operation started on each pool (cluster path, pool name), not yet seen
    /// `DONE`.
    pending: Arc<Mutex<BTreeMap<(String, String), Pending>>>,
    /// Each cluster's node zones, read once.
    cluster_zones: Arc<Mutex<BTreeMap<String, Vec<String>>>>,
}

/// The path of `cluster` (`projects/p/locations/l/clusters/c`) and its parent
/// (`projects/p/locations/l`); any other cloud's cluster is refused before a call.
fn gke_paths(cluster: &ClusterRef) -> Result<(String, String), CloudError> {
    match cluster {
        ClusterRef::Gke {
            project, location, ..
        } => Ok((
            cluster.id(),
            format!("projects/{project}/locations/{location}"),
        )),
        other => Err(CloudError::Invalid(format!("{other} is not a GKE cluster"))),
    }
}

/// `name` when it is a legal pool name (so it is safe in a URL path).
fn pool_name(name: &str) -> Result<&str, CloudError> {
    if super::rules::GKE.name_ok(name) {
        Ok(name)
    } else {
        Err(CloudError::Invalid(format!(
            "GKE node pool name {name:?} is not legal: {}",
            super::rules::GKE.name_rule
        )))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CreateRequest<'a> {
    node_pool: &'a NodePool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SetSize {
    node_count: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SetAutoscaling {
    autoscaling: convert::Autoscaling,
}

#[derive(Serialize)]
struct Labels<'a> {
    labels: &'a BTreeMap<String, String>,
}

#[derive(Serialize)]
struct Taints<'a> {
    taints: &'a [NodeTaint],
}

/// An `UpdateNodePoolRequest` of the wrapped fields that change (each replaces the whole
/// old value).
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct UpdateRequest<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    labels: Option<Labels<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    taints: Option<Taints<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_labels: Option<Labels<'a>>,
}

impl Gke {
    /// A client over `rest` (made by [`super::GcpSession::gke`]); no request is made.
    pub(super) fn new(
        rest: Rest,
        backoff: Backoff,
        operation_timeout: Duration,
        cancel: &Cancel,
    ) -> Self {
        Gke {
            rest,
            compute: None,
            backoff,
            operation_timeout,
            cancel: cancel.clone(),
            pending: Arc::default(),
            cluster_zones: Arc::default(),
        }
    }

    /// The client with Compute Engine over `compute`, to count the nodes up.
    pub(super) fn with_compute(mut self, compute: Rest) -> Self {
        self.compute = Some(compute);
        self
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many zones a pool of `cluster` spans by default (its node `locations`).
    async fn cluster_zones(&self, path: &str) -> Result<usize, CloudError> {
        Ok(self.cluster_zone_names(path).await?.len().max(1))
    }

    /// The zones a pool of `cluster` spans by default (its node `locations`).
    async fn cluster_zone_names(&self, path: &str) -> Result<Vec<String>, CloudError> {
        let known = self
            .cluster_zones
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(path)
            .cloned();
        if let Some(z) = known {
            return Ok(z);
        }
        #[derive(serde::Deserialize)]
        struct Cluster {
            #[serde(default)]
            locations: Vec<String>,
        }
        let c: Cluster = self.rest.get("clusters.get", path).await?;
        self.cluster_zones
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(path.to_string(), c.locations.clone());
        Ok(c.locations)
    }

    /// Sends one mutation of pool `name`, remembering the operation it started.
    async fn mutate<B: Serialize + ?Sized>(
        &self,
        cluster: &ClusterRef,
        name: &str,
        what: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<(), CloudError> {
        let (cpath, parent) = gke_paths(cluster)?;
        let op: Operation = self.rest.call(what, method, path, body).await?;
        self.pending().insert(
            (cpath, name.to_string()),
            Pending {
                parent,
                name: op.name,
                what: format!("{what} of node pool {cluster}/{name}"),
            },
        );
        Ok(())
    }

    /// Waits (at most `timeout`) for the operation last started on pool `name`, if any.
    async fn settle(
        &self,
        cluster: &ClusterRef,
        name: &str,
        timeout: Duration,
    ) -> Result<(), CloudError> {
        let key = (cluster.id(), name.to_string());
        let Some(op) = self.pending().get(&key).cloned() else {
            return Ok(());
        };
        let done = operations::wait(&self.rest, self.backoff, timeout, &self.cancel, &op).await;
        match done {
            Ok(()) | Err(CloudError::NotFound(_)) => {
                self.pending().remove(&key);
                Ok(())
            }
            Err(e @ (CloudError::Timeout { .. } | CloudError::Cancelled(_))) => Err(e),
            Err(e) if e.is_retryable() => Err(e),
            Err(e) => {
                // The operation ended with an error: it is over.
                self.pending().remove(&key);
                Err(e)
            }
        }
    }

    /// The raw pool, or `None` when it (or its cluster) does not exist.
    async fn raw_pool(
        &self,
        cluster: &ClusterRef,
        name: &str,
    ) -> Result<Option<NodePool>, CloudError> {
        let (cpath, _) = gke_paths(cluster)?;
        let path = format!("{cpath}/nodePools/{}", pool_name(name)?);
        match self.rest.get::<NodePool>("nodePools.get", &path).await {
            Ok(p) => Ok(Some(p)),
            Err(CloudError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// The Compute path (`projects/p/zones/z/instanceGroupManagers/m`) of an instance group
/// URL as GKE lists it (`https://www.googleapis.com/compute/v1/projects/…`), if it is one.
fn igm_path(url: &str) -> Option<&str> {
    let at = url.find("projects/")?;
    let path = &url[at..];
    path.contains("/instanceGroupManagers/").then_some(path)
}

/// `want` plus the entries of `raw` that GKE set itself (kept on replace).
fn with_system<T: Clone>(want: &[T], raw: &[T], system: impl Fn(&T) -> bool) -> Vec<T> {
    let mut out = want.to_vec();
    out.extend(raw.iter().filter(|t| system(t)).cloned());
    out
}

fn is_system(key: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| key.starts_with(p))
}

#[async_trait::async_trait]
impl NodeGroups for Gke {
    /// GKE runs one operation per cluster: this process's changes to a cluster queue
    /// behind each other ([`ClusterTurns::process`]).
    async fn take_turn(&self, cluster: &ClusterRef) -> Result<Turn, CloudError> {
        ClusterTurns::process()
            .take(cluster, self.rest.pace(), &self.cancel)
            .await
    }

    async fn pause(&self, pause: Duration) -> Result<(), CloudError> {
        poll::pause(self.rest.pace(), &self.cancel, pause).await
    }

    fn now(&self) -> Duration {
        self.rest.pace().now()
    }

    fn traits(&self) -> &'static CloudTraits {
        &super::rules::GKE
    }

    /// GKE has no request id for creates: a create repeated after a lost answer is 409
    /// `ALREADY_EXISTS` ([`CloudError::Conflict`]), which the reconcile resolves by
    /// reading the pool; `token` is not sent.
    async fn create_group(
        &self,
        cluster: &ClusterRef,
        spec: &GroupSpec,
        _token: &str,
    ) -> Result<NodeGroup, CloudError> {
        let (cpath, _) = gke_paths(cluster)?;
        super::rules::GKE
            .check_group(spec)
            .map_err(CloudError::Invalid)?;
        let NodeClass::Gcp(class) = &spec.class else {
            return Err(CloudError::Invalid(
                "a GKE node pool needs a GCP node class".into(),
            ));
        };
        let zones = if class.locations.is_empty() {
            self.cluster_zone_names(&cpath).await?
        } else {
            Vec::new()
        };
        let pool = convert::pool_to_gke(spec, &zones)?;
        self.mutate(
            cluster,
            &spec.name,
            "nodePools.create",
            reqwest::Method::POST,
            &format!("{cpath}/nodePools"),
            Some(&CreateRequest { node_pool: &pool }),
        )
        .await?;
        self.get_group(cluster, &spec.name).await?.ok_or_else(|| {
            CloudError::Other(format!(
                "GKE created node pool {cluster}/{} but does not find it",
                spec.name
            ))
        })
    }

    async fn get_group(
        &self,
        cluster: &ClusterRef,
        name: &str,
    ) -> Result<Option<NodeGroup>, CloudError> {
        let (cpath, _) = gke_paths(cluster)?;
        self.raw_pool(cluster, name)
            .await?
            .map(|p| convert::pool_from_gke(&p, format!("{cpath}/nodePools/{name}")))
            .transpose()
    }

    /// Counts through `setAutoscaling` (bounds) and `setSize` (a set desired count), then
    /// labels, taints and resource labels through one `update` (PUT): one operation each,
    /// one at a time (each but the last waited for here).
    async fn update_group(
        &self,
        cluster: &ClusterRef,
        live: &NodeGroup,
        want: &GroupSpec,
    ) -> Result<bool, CloudError> {
        let (cpath, _) = gke_paths(cluster)?;
        let name = pool_name(&want.name)?;
        let path = format!("{cpath}/nodePools/{name}");
        let mut started = false;
        let wait_previous = |started: bool| async move {
            if started {
                self.settle(cluster, name, self.operation_timeout).await
            } else {
                Ok(())
            }
        };
        let s = want.scaling.resolved_against(Some(live.spec.scaling));
        s.check().map_err(CloudError::Invalid)?;
        if (s.min, s.max) != (live.spec.scaling.min, live.spec.scaling.max) {
            let body = SetAutoscaling {
                autoscaling: convert::autoscaling_to_gke(s, want.capacity),
            };
            self.mutate(
                cluster,
                name,
                "nodePools.setAutoscaling",
                reqwest::Method::POST,
                &format!("{path}:setAutoscaling"),
                Some(&body),
            )
            .await?;
            started = true;
        }
        if let Some(n) = want.scaling.desired
            && Some(n) != live.spec.scaling.desired
        {
            wait_previous(started).await?;
            let zones = match &live.spec.class {
                NodeClass::Gcp(c) if !c.locations.is_empty() => c.locations.len(),
                _ => self.cluster_zones(&cpath).await?,
            };
            let body = SetSize {
                node_count: convert::per_zone(n, s.max, zones),
            };
            self.mutate(
                cluster,
                name,
                "nodePools.setSize",
                reqwest::Method::POST,
                &format!("{path}:setSize"),
                Some(&body),
            )
            .await?;
            started = true;
        }
        let labels = live.spec.labels != want.labels;
        let taints = live.spec.taints != want.taints;
        let tags = live.spec.tags != want.tags;
        if labels || taints || tags {
            wait_previous(started).await?;
            // GKE replaces each wrapped field whole: keep what GKE set itself.
            let raw = self
                .raw_pool(cluster, name)
                .await?
                .ok_or_else(|| CloudError::NotFound(format!("node pool {cluster}/{name}")))?;
            let t = &super::rules::GKE;
            let keep = |want: &BTreeMap<String, String>,
                        raw: &BTreeMap<String, String>,
                        prefixes: &[&str]| {
                let mut out = want.clone();
                out.extend(
                    raw.iter()
                        .filter(|(k, _)| is_system(k, prefixes))
                        .map(|(k, v)| (k.clone(), v.clone())),
                );
                out
            };
            let new_labels = keep(&want.labels, &raw.config.labels, t.system_label_prefixes);
            let new_tags = keep(
                &want.tags,
                &raw.config.resource_labels,
                t.system_tag_prefixes,
            );
            let new_taints = with_system(
                &convert::taints_to_gke(&want.taints),
                &raw.config.taints,
                |x| is_system(&x.key, t.system_taint_prefixes),
            );
            let body = UpdateRequest {
                labels: labels.then_some(Labels {
                    labels: &new_labels,
                }),
                taints: taints.then_some(Taints {
                    taints: &new_taints,
                }),
                resource_labels: tags.then_some(Labels { labels: &new_tags }),
            };
            self.mutate(
                cluster,
                name,
                "nodePools.update",
                reqwest::Method::PUT,
                &path,
                Some(&body),
            )
            .await?;
            started = true;
        }
        Ok(started)
    }

    /// The instances of the pool's managed instance groups (`instanceGroupUrls`, one per
    /// zone) that run with no action pending: each group's `currentActions.none`
    /// (Compute `instanceGroupManagers.get`). Without Compute, or before GKE lists the
    /// groups, no count.
    async fn nodes_up(
        &self,
        cluster: &ClusterRef,
        group: &NodeGroup,
    ) -> Result<Option<u32>, CloudError> {
        let Some(compute) = &self.compute else {
            return Ok(None);
        };
        let Some(pool) = self.raw_pool(cluster, group.name()).await? else {
            return Ok(None);
        };
        let paths: Vec<&str> = pool
            .instance_group_urls
            .iter()
            .filter_map(|u| igm_path(u))
            .collect();
        if paths.is_empty() {
            return Ok(None);
        }
        let mut up = 0u32;
        for path in paths {
            let igm: serde_json::Value = match compute.get("instanceGroupManagers.get", path).await
            {
                Ok(v) => v,
                // A group GKE has not made yet, or has just deleted: no count.
                Err(CloudError::NotFound(_)) => return Ok(None),
                Err(e) => return Err(e),
            };
            let none = igm
                .pointer("/currentActions/none")
                .and_then(|n| n.as_u64().or_else(|| n.as_str()?.parse().ok()))
                .unwrap_or(0);
            up = up.saturating_add(u32::try_from(none).unwrap_or(u32::MAX));
        }
        Ok(Some(up))
    }

    async fn list_groups(&self, cluster: &ClusterRef) -> Result<Vec<String>, CloudError> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct List {
            #[serde(default)]
            node_pools: Vec<NodePool>,
        }
        let (cpath, _) = gke_paths(cluster)?;
        let l: List = self
            .rest
            .get("nodePools.list", &format!("{cpath}/nodePools"))
            .await?;
        Ok(l.node_pools.into_iter().map(|p| p.name).collect())
    }

    async fn delete_group(&self, cluster: &ClusterRef, name: &str) -> Result<(), CloudError> {
        let (cpath, _) = gke_paths(cluster)?;
        let name = pool_name(name)?;
        self.mutate(
            cluster,
            name,
            "nodePools.delete",
            reqwest::Method::DELETE,
            &format!("{cpath}/nodePools/{name}"),
            None::<&()>,
        )
        .await
    }

    async fn wait_until(
        &self,
        cluster: &ClusterRef,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError> {
        let pace = self.rest.pace();
        let start = pace.now();
        self.settle(cluster, name, timeout).await?;
        poll::group(
            pace,
            self.backoff,
            timeout.saturating_sub(pace.since(start)),
            &self.cancel,
            &super::rules::GKE,
            cluster,
            name,
            target,
            || self.get_group(cluster, name),
        )
        .await
    }
}
