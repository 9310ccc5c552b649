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

mod config_cache;
mod convert;
mod errors;
mod retrying;

pub use config_cache::{ConfigCache, ConfigKey};

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_eks::config::Region;
use aws_sdk_eks::config::retry::RetryConfig;
use aws_sdk_eks::config::timeout::TimeoutConfig;
use aws_sdk_eks::types::{AmiTypes, CapacityTypes, UpdateLabelsPayload, UpdateTaintsPayload};

use super::poll::{self, Backoff, TokioClock, wait_step, wait_what};
use super::{CloudError, NodeGroup, NodeGroupRequest, NodeGroupUpdate, NodeGroups, WaitTarget};
use crate::cancel::Cancel;
use crate::retry::{RetryPolicy, fresh_token};
use convert::{map_or_none, node_group_from_sdk, scaling_to_sdk, taint_to_sdk, vec_or_none};
use retrying::send;

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
    /// Retries of each call (default [`RetryPolicy::default`]).
    pub retry: Option<RetryPolicy>,
    /// Longest one HTTP attempt may take before it is abandoned and retried (default 30 s).
    pub attempt_timeout: Option<Duration>,
    /// Set it to end waits and retry pauses early (Terraform's `StopProvider`).
    pub cancel: Cancel,
}

/// The EKS node group adapter.
#[derive(Debug, Clone)]
pub struct Eks {
    client: aws_sdk_eks::Client,
    backoff: Backoff,
    retry: RetryPolicy,
    cancel: Cancel,
}

impl Eks {
    /// Loads the usual credential chain (environment, profile, SSO, IMDS ...) and builds
    /// a client with the overrides in `opts`.
    pub async fn connect(opts: &EksOptions) -> Self {
        Self::connect_cached(&ConfigCache::new(), opts).await
    }

    /// Like [`Eks::connect`], with the chain loaded once per region and profile in
    /// `cache` (a long-lived process such as the provider keeps one cache).
    pub async fn connect_cached(cache: &ConfigCache, opts: &EksOptions) -> Self {
        let key = ConfigKey {
            region: opts.region.clone(),
            profile: opts.profile.clone(),
        };
        Self::from_sdk_config(&cache.get(&key).await, opts)
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
        // Retries are ours (crate::retry), not the SDK's: one policy for every cloud.
        conf = conf.retry_config(RetryConfig::disabled()).timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(10))
                .operation_attempt_timeout(opts.attempt_timeout.unwrap_or(Duration::from_secs(30)))
                .build(),
        );
        Eks {
            client: aws_sdk_eks::Client::from_conf(conf.build()),
            backoff: opts.backoff.unwrap_or_default(),
            retry: opts.retry.unwrap_or_default(),
            cancel: opts.cancel.clone(),
        }
    }

    /// Wraps a ready client (whose own retry config is left as it is).
    pub fn from_client(client: aws_sdk_eks::Client, backoff: Backoff, retry: RetryPolicy) -> Self {
        Eks {
            client,
            backoff,
            retry,
            cancel: Cancel::new(),
        }
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
        let call = self
            .client
            .create_nodegroup()
            .cluster_name(&req.cluster)
            .nodegroup_name(&req.name)
            .capacity_type(CapacityTypes::from(convert::capacity_to_eks(
                req.capacity_type,
            )))
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
            .set_client_request_token(req.client_request_token.clone());
        let out = send(&self.retry, &self.cancel, "CreateNodegroup", || {
            call.clone().send()
        })
        .await?;
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
        let call = self
            .client
            .describe_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(name);
        match send(&self.retry, &self.cancel, "DescribeNodegroup", || {
            call.clone().send()
        })
        .await
        {
            Ok(out) => out.nodegroup().map(node_group_from_sdk).transpose(),
            Err(CloudError::NotFound(_)) => Ok(None),
            Err(other) => Err(other),
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
            .nodegroup_name(name)
            // One token per logical update, the same on every retry of it.
            .client_request_token(fresh_token("gputf-update"));
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
        send(&self.retry, &self.cancel, "UpdateNodegroupConfig", || {
            call.clone().send()
        })
        .await?;
        Ok(())
    }

    async fn tag_node_group(
        &self,
        arn: &str,
        add: &BTreeMap<String, String>,
        remove: &[String],
    ) -> Result<(), CloudError> {
        if let Some(tags) = map_or_none(add) {
            let call = self
                .client
                .tag_resource()
                .resource_arn(arn)
                .set_tags(Some(tags));
            send(&self.retry, &self.cancel, "TagResource", || {
                call.clone().send()
            })
            .await?;
        }
        if !remove.is_empty() {
            let call = self
                .client
                .untag_resource()
                .resource_arn(arn)
                .set_tag_keys(Some(remove.to_vec()));
            send(&self.retry, &self.cancel, "UntagResource", || {
                call.clone().send()
            })
            .await?;
        }
        Ok(())
    }

    async fn cluster_subnets(&self, cluster: &str) -> Result<Vec<String>, CloudError> {
        let call = self.client.describe_cluster().name(cluster);
        let out = send(&self.retry, &self.cancel, "DescribeCluster", || {
            call.clone().send()
        })
        .await?;
        let c = out
            .cluster()
            .ok_or_else(|| CloudError::NotFound(format!("cluster {cluster}")))?;
        Ok(c.resources_vpc_config()
            .map(|v| v.subnet_ids().to_vec())
            .unwrap_or_default())
    }

    async fn list_node_groups(&self, cluster: &str) -> Result<Vec<String>, CloudError> {
        let mut names = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let call = self
                .client
                .list_nodegroups()
                .cluster_name(cluster)
                .set_next_token(next.clone());
            let out = send(&self.retry, &self.cancel, "ListNodegroups", || {
                call.clone().send()
            })
            .await?;
            names.extend(out.nodegroups().iter().cloned());
            next = out.next_token().map(str::to_string);
            if next.is_none() {
                return Ok(names);
            }
        }
    }

    async fn delete_node_group(&self, cluster: &str, name: &str) -> Result<(), CloudError> {
        let call = self
            .client
            .delete_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(name);
        send(&self.retry, &self.cancel, "DeleteNodegroup", || {
            call.clone().send()
        })
        .await?;
        Ok(())
    }

    async fn wait_until(
        &self,
        cluster: &str,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError> {
        poll::until(
            &TokioClock::default(),
            self.backoff,
            timeout,
            &self.cancel,
            &wait_what(cluster, name, target),
            || async {
                let got = self.describe_node_group(cluster, name).await?;
                wait_step(cluster, name, target, got)
            },
        )
        .await
    }
}
