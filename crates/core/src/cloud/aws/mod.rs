//! EKS managed node groups through aws-sdk-eks: [`Eks`] implements [`NodeGroups`].
//!
//! Emulator notes (moto 5.2.5, what the integration tests run against): node groups are
//! `ACTIVE` the moment they are created and gone the moment they are deleted, so waits
//! return on the first poll; `clientRequestToken` is stored but not used for idempotency
//! (a repeated create is `ResourceInUseException`, i.e. [`CloudError::Conflict`]);
//! `TagResource`/`UntagResource` only know cluster ARNs (a node group ARN is
//! `NotFoundException`), so tags cannot be changed after create; `updateConfig` is not
//! reported back; no enum
//! validation (any AMI type is accepted) and no backing instances or health issues.

mod convert;
mod errors;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use aws_sdk_eks::config::{BehaviorVersion, Region};
use aws_sdk_eks::types::{AmiTypes, CapacityTypes, UpdateLabelsPayload, UpdateTaintsPayload};

use super::poll::{Backoff, wait_step, wait_what};
use super::{CloudError, NodeGroup, NodeGroupRequest, NodeGroupUpdate, NodeGroups, WaitTarget};
use convert::{map_or_none, node_group_from_sdk, scaling_to_sdk, taint_to_sdk, vec_or_none};
use errors::map_sdk_error;

/// How to reach EKS; every field is optional and defaults to the usual AWS chain.
#[derive(Debug, Clone, Default)]
pub struct EksOptions {
    /// Region override (otherwise `AWS_REGION`, the profile, ...).
    pub region: Option<String>,
    /// Endpoint override, e.g. an emulator at `http://127.0.0.1:5000`.
    pub endpoint_url: Option<String>,
    /// Named profile from the shared config files.
    pub profile: Option<String>,
    /// Poll schedule of waits (default 5 s doubling to 30 s).
    pub backoff: Option<Backoff>,
}

/// The EKS node group adapter.
#[derive(Debug, Clone)]
pub struct Eks {
    client: aws_sdk_eks::Client,
    backoff: Backoff,
}

impl Eks {
    /// Loads the usual credential chain (environment, profile, SSO, IMDS ...) and builds
    /// a client with the overrides in `opts`.
    pub async fn connect(opts: &EksOptions) -> Self {
        let mut loader = aws_config::defaults(BehaviorVersion::latest());
        if let Some(r) = &opts.region {
            loader = loader.region(Region::new(r.clone()));
        }
        if let Some(p) = &opts.profile {
            loader = loader.profile_name(p);
        }
        Self::from_sdk_config(&loader.load().await, opts)
    }

    /// Builds from an already loaded SDK config (shared with other AWS clients).
    pub fn from_sdk_config(sdk: &aws_config::SdkConfig, opts: &EksOptions) -> Self {
        let mut conf = aws_sdk_eks::config::Builder::from(sdk);
        if let Some(r) = &opts.region {
            conf = conf.region(Region::new(r.clone()));
        }
        if let Some(ep) = &opts.endpoint_url {
            conf = conf.endpoint_url(ep);
        }
        Eks {
            client: aws_sdk_eks::Client::from_conf(conf.build()),
            backoff: opts.backoff.unwrap_or_default(),
        }
    }

    /// Wraps a ready client.
    pub fn from_client(client: aws_sdk_eks::Client, backoff: Backoff) -> Self {
        Eks { client, backoff }
    }

    /// The underlying SDK client, for calls outside the trait.
    pub fn client(&self) -> &aws_sdk_eks::Client {
        &self.client
    }
}

#[async_trait::async_trait]
impl NodeGroups for Eks {
    async fn create_node_group(&self, req: &NodeGroupRequest) -> Result<NodeGroup, CloudError> {
        req.validate()?;
        let out = self
            .client
            .create_nodegroup()
            .cluster_name(&req.cluster)
            .nodegroup_name(&req.name)
            .capacity_type(CapacityTypes::from(req.capacity_type.as_str()))
            .set_instance_types(Some(req.instance_types.clone()))
            .ami_type(AmiTypes::from(req.ami_type.as_str()))
            .scaling_config(scaling_to_sdk(req.scaling)?)
            .set_labels(map_or_none(&req.labels))
            .set_taints(vec_or_none(
                &req.taints.iter().map(taint_to_sdk).collect::<Vec<_>>(),
            ))
            .set_tags(map_or_none(&req.tags))
            .node_role(&req.node_role_arn)
            .set_subnets(Some(req.subnets.clone()))
            // Without one the SDK generates a fresh token per call, so only a caller's
            // token makes a retried create idempotent.
            .set_client_request_token(req.client_request_token.clone())
            .send()
            .await
            .map_err(|e| map_sdk_error("CreateNodegroup", e))?;
        let g = out
            .nodegroup()
            .ok_or_else(|| CloudError::Other("CreateNodegroup: no nodegroup in response".into()))?;
        node_group_from_sdk(g)
    }

    async fn describe_node_group(
        &self,
        cluster: &str,
        name: &str,
    ) -> Result<Option<NodeGroup>, CloudError> {
        let res = self
            .client
            .describe_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(name)
            .send()
            .await;
        match res {
            Ok(out) => out.nodegroup().map(node_group_from_sdk).transpose(),
            Err(e) => match map_sdk_error("DescribeNodegroup", e) {
                CloudError::NotFound(_) => Ok(None),
                other => Err(other),
            },
        }
    }

    async fn update_node_group_config(
        &self,
        cluster: &str,
        name: &str,
        update: &NodeGroupUpdate,
    ) -> Result<(), CloudError> {
        if update.is_empty() {
            return Err(CloudError::Invalid("the update changes nothing".into()));
        }
        let mut call = self
            .client
            .update_nodegroup_config()
            .cluster_name(cluster)
            .nodegroup_name(name);
        if let Some(s) = update.scaling {
            call = call.scaling_config(scaling_to_sdk(s)?);
        }
        if !update.labels_add.is_empty() || !update.labels_remove.is_empty() {
            call = call.labels(
                UpdateLabelsPayload::builder()
                    .set_add_or_update_labels(map_or_none(&update.labels_add))
                    .set_remove_labels(vec_or_none(&update.labels_remove))
                    .build(),
            );
        }
        if !update.taints_add.is_empty() || !update.taints_remove.is_empty() {
            let sdk =
                |ts: &[super::Taint]| vec_or_none(&ts.iter().map(taint_to_sdk).collect::<Vec<_>>());
            call = call.taints(
                UpdateTaintsPayload::builder()
                    .set_add_or_update_taints(sdk(&update.taints_add))
                    .set_remove_taints(sdk(&update.taints_remove))
                    .build(),
            );
        }
        call.send()
            .await
            .map_err(|e| map_sdk_error("UpdateNodegroupConfig", e))?;
        Ok(())
    }

    async fn tag_node_group(
        &self,
        arn: &str,
        add: &BTreeMap<String, String>,
        remove: &[String],
    ) -> Result<(), CloudError> {
        if let Some(tags) = map_or_none(add) {
            self.client
                .tag_resource()
                .resource_arn(arn)
                .set_tags(Some(tags))
                .send()
                .await
                .map_err(|e| map_sdk_error("TagResource", e))?;
        }
        if !remove.is_empty() {
            self.client
                .untag_resource()
                .resource_arn(arn)
                .set_tag_keys(Some(remove.to_vec()))
                .send()
                .await
                .map_err(|e| map_sdk_error("UntagResource", e))?;
        }
        Ok(())
    }

    async fn cluster_subnets(&self, cluster: &str) -> Result<Vec<String>, CloudError> {
        let out = self
            .client
            .describe_cluster()
            .name(cluster)
            .send()
            .await
            .map_err(|e| map_sdk_error("DescribeCluster", e))?;
        let c = out
            .cluster()
            .ok_or_else(|| CloudError::NotFound(format!("cluster {cluster}")))?;
        Ok(c.resources_vpc_config()
            .map(|v| v.subnet_ids().to_vec())
            .unwrap_or_default())
    }

    async fn delete_node_group(&self, cluster: &str, name: &str) -> Result<(), CloudError> {
        self.client
            .delete_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(name)
            .send()
            .await
            .map_err(|e| map_sdk_error("DeleteNodegroup", e))?;
        Ok(())
    }

    async fn wait_until(
        &self,
        cluster: &str,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError> {
        let start = Instant::now();
        let deadline = start + timeout;
        let mut last_retryable = None;
        for attempt in 0u32.. {
            match self.describe_node_group(cluster, name).await {
                Ok(got) => {
                    last_retryable = None;
                    if let Some(done) = wait_step(cluster, name, target, got)? {
                        return Ok(done);
                    }
                }
                // Throttling or a blip while polling: keep polling until the deadline.
                Err(e) if e.is_retryable() => last_retryable = Some(e),
                Err(e) => return Err(e),
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            tokio::time::sleep(self.backoff.next_sleep(attempt, deadline - now)).await;
        }
        Err(last_retryable.unwrap_or_else(|| CloudError::Timeout {
            what: wait_what(cluster, name, target),
            waited: start.elapsed(),
        }))
    }
}
