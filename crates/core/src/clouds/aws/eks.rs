//! EKS managed node groups through aws-sdk-eks: [`Eks`] implements [`NodeGroups`], with
//! the launch templates a group on a capacity reservation needs.
//!
//! Emulator notes (moto 5.2.5, what the integration tests run against): node groups are
//! `ACTIVE` the moment they are created and gone the moment they are deleted, so waits
//! return on the first poll; `clientRequestToken` is stored but not used for idempotency
//! (a repeated create is `ResourceInUseException`, i.e. [`CloudError::Conflict`]);
//! `TagResource`/`UntagResource` only know cluster ARNs (a node group ARN is
//! `NotFoundException`), so tags cannot be changed after create; `updateConfig` is not
//! reported back; no enum
//! validation (any AMI type is accepted) and no backing instances or health issues.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_eks::config::Region;
use aws_sdk_eks::config::retry::RetryConfig;
use aws_sdk_eks::types::{AmiTypes, CapacityTypes, UpdateLabelsPayload, UpdateTaintsPayload};

use super::clients::{ec2_client, sdk_timeouts};
use super::convert;
use super::convert::{map_or_none, node_group_from_sdk, scaling_to_sdk, taint_to_sdk, vec_or_none};
use super::retrying::send;
use super::settings::AwsSettings;
use crate::cancel::Cancel;
use crate::pace::Pace;
use crate::retry::{RetryPolicy, fresh_token};
use crate::seam::delta::{ConfigDelta, tag_delta};
use crate::seam::poll::{self, Backoff};
use crate::seam::{
    CapacityType, CloudError, CloudTraits, ClusterRef, GroupSpec, NodeClass, NodeGroup, NodeGroups,
    WaitTarget,
};

/// The EKS node group adapter.
#[derive(Debug, Clone)]
pub struct Eks {
    client: aws_sdk_eks::Client,
    /// EC2, for the launch templates of groups on a capacity reservation.
    ec2: Option<aws_sdk_ec2::Client>,
    backoff: Backoff,
    retry: RetryPolicy,
    /// The clock of polls, retry pauses and busy pauses.
    pace: Pace,
    cancel: Cancel,
    /// Each cluster's subnets, read once (DescribeCluster) by the first group that needs
    /// them: a cluster's subnets do not change during an operation.
    cluster_subnets: Arc<Mutex<BTreeMap<String, Vec<String>>>>,
    /// Groups this adapter has read or created with a launch template of ours (the
    /// reservation tag): only their deletes delete a template, so a pool without one
    /// never calls EC2.
    templated: Arc<Mutex<std::collections::BTreeSet<String>>>,
}

impl Eks {
    /// Builds from an already loaded SDK config (shared with other AWS clients), with the
    /// overrides in `settings`, calling `region` (`None`: the config's own); `cancel`
    /// ends waits and retry pauses early.
    pub fn from_sdk_config(
        sdk: &aws_config::SdkConfig,
        settings: &AwsSettings,
        region: Option<&str>,
        cancel: &Cancel,
    ) -> Self {
        let mut conf = aws_sdk_eks::config::Builder::from(sdk);
        if let Some(r) = region {
            conf = conf.region(Region::new(r.to_string()));
        }
        if let Some(ep) = &settings.eks_endpoint {
            conf = conf.endpoint_url(ep);
        }
        // Retries are ours (crate::retry), not the SDK's: one policy for every cloud.
        conf = conf
            .retry_config(RetryConfig::disabled())
            .timeout_config(sdk_timeouts(settings.attempt_timeout));
        Eks {
            client: aws_sdk_eks::Client::from_conf(conf.build()),
            ec2: Some(ec2_client(
                sdk,
                region,
                settings.ec2_endpoint.as_deref(),
                settings.attempt_timeout,
            )),
            backoff: settings.backoff.unwrap_or_default(),
            retry: settings.retry.unwrap_or_default(),
            pace: settings.pace(&["EKS", "EC2"]),
            cancel: cancel.clone(),
            cluster_subnets: Arc::default(),
            templated: Arc::default(),
        }
    }

    /// Wraps a ready client (whose own retry config is left as it is).
    pub fn from_client(client: aws_sdk_eks::Client, backoff: Backoff, retry: RetryPolicy) -> Self {
        Eks {
            client,
            ec2: None,
            backoff,
            retry,
            pace: Pace::real(),
            cancel: Cancel::new(),
            cluster_subnets: Arc::default(),
            templated: Arc::default(),
        }
    }

    /// The underlying SDK client, for calls outside the trait.
    pub fn client(&self) -> &aws_sdk_eks::Client {
        &self.client
    }
}

/// The launch template of node group `group` in `cluster`: named after both, so the
/// adapter finds it again (a retried create, a delete) without storing its id.
pub fn launch_template_name(cluster: &str, group: &str) -> String {
    let mut name = format!("gpu-tf-{cluster}-{group}");
    name.truncate(128);
    name
}

impl Eks {
    /// The EC2 client, or an error saying a group on a capacity reservation needs one.
    fn ec2(&self) -> Result<&aws_sdk_ec2::Client, CloudError> {
        self.ec2.as_ref().ok_or_else(|| {
            CloudError::Invalid(
                "a node group on a capacity reservation needs an EC2 client for its launch template".into(),
            )
        })
    }

    /// The id of launch template `name`, which targets capacity reservation `reservation`
    /// (for a capacity block also with market type `capacity-block`): the one already
    /// there (a create retried after a lost answer), or a new one. The template sets
    /// nothing else, so EKS still takes the AMI type, instance types, role and subnets
    /// from the node group.
    async fn ensure_launch_template(
        &self,
        name: &str,
        reservation: &crate::model::Ec2Reservation,
        tags: &BTreeMap<String, String>,
        token: &str,
    ) -> Result<String, CloudError> {
        use aws_sdk_ec2::types::{
            CapacityReservationTarget, LaunchTemplateCapacityReservationSpecificationRequest,
            LaunchTemplateInstanceMarketOptionsRequest, MarketType, RequestLaunchTemplateData,
            ResourceType, Tag, TagSpecification,
        };
        let ec2 = self.ec2()?;
        let describe = ec2.describe_launch_templates().launch_template_names(name);
        match send(
            &self.retry,
            &self.pace,
            &self.cancel,
            "DescribeLaunchTemplates",
            || describe.clone().send(),
        )
        .await
        {
            Ok(out) => {
                if let Some(id) = out
                    .launch_templates()
                    .first()
                    .and_then(|t| t.launch_template_id())
                {
                    return Ok(id.to_string());
                }
            }
            Err(CloudError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
        let data = RequestLaunchTemplateData::builder()
            .capacity_reservation_specification(
                LaunchTemplateCapacityReservationSpecificationRequest::builder()
                    .capacity_reservation_target(
                        CapacityReservationTarget::builder()
                            .capacity_reservation_id(&reservation.id)
                            .build(),
                    )
                    .build(),
            )
            .set_instance_market_options(reservation.capacity_block.then(|| {
                LaunchTemplateInstanceMarketOptionsRequest::builder()
                    .market_type(MarketType::CapacityBlock)
                    .build()
            }))
            .build();
        let tags = TagSpecification::builder()
            .resource_type(ResourceType::LaunchTemplate)
            .set_tags(Some(
                tags.iter()
                    .map(|(k, v)| Tag::builder().key(k).value(v).build())
                    .collect(),
            ))
            .build();
        let create = ec2
            .create_launch_template()
            .launch_template_name(name)
            .launch_template_data(data)
            .tag_specifications(tags)
            // The same token makes a retried create the same template.
            .client_token(token);
        let out = send(
            &self.retry,
            &self.pace,
            &self.cancel,
            "CreateLaunchTemplate",
            || create.clone().send(),
        )
        .await?;
        out.launch_template()
            .and_then(|t| t.launch_template_id())
            .map(str::to_string)
            .ok_or_else(|| CloudError::Other("CreateLaunchTemplate: no id in response".into()))
    }

    /// Remembers that `g` launches through a launch template of ours; returns it.
    fn note_template(&self, g: NodeGroup) -> NodeGroup {
        if let NodeClass::Aws(c) = &g.spec.class
            && c.capacity_reservation.is_some()
            && let Ok(mut set) = self.templated.lock()
        {
            set.insert(g.spec.name.clone());
        }
        g
    }

    /// Deletes the launch template of deleted group `group` of `cluster`, if it had one.
    async fn delete_launch_template(&self, cluster: &str, group: &str) -> Result<(), CloudError> {
        let had = self
            .templated
            .lock()
            .map(|mut s| s.remove(group))
            .unwrap_or(false);
        let (true, Some(ec2)) = (had, &self.ec2) else {
            return Ok(());
        };
        let name = launch_template_name(cluster, group);
        let call = ec2.delete_launch_template().launch_template_name(&name);
        match send(
            &self.retry,
            &self.pace,
            &self.cancel,
            "DeleteLaunchTemplate",
            || call.clone().send(),
        )
        .await
        {
            Ok(_) | Err(CloudError::NotFound(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The subnet ids `cluster` was created with, where node groups go by default (read
    /// once per adapter).
    async fn cluster_subnets(&self, cluster: &str) -> Result<Vec<String>, CloudError> {
        let known = self
            .cluster_subnets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(cluster)
            .cloned();
        if let Some(s) = known {
            return Ok(s);
        }
        let call = self.client.describe_cluster().name(cluster);
        let out = send(
            &self.retry,
            &self.pace,
            &self.cancel,
            "DescribeCluster",
            || call.clone().send(),
        )
        .await?;
        let c = out
            .cluster()
            .ok_or_else(|| CloudError::NotFound(format!("cluster {cluster}")))?;
        let subnets = c
            .resources_vpc_config()
            .map(|v| v.subnet_ids().to_vec())
            .unwrap_or_default();
        self.cluster_subnets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(cluster.to_string(), subnets.clone());
        Ok(subnets)
    }

    /// Sends the config delta `delta` (scaling, labels, taints) as one
    /// UpdateNodegroupConfig.
    async fn update_config(
        &self,
        cluster: &str,
        name: &str,
        delta: &ConfigDelta,
    ) -> Result<(), CloudError> {
        let mut call = self
            .client
            .update_nodegroup_config()
            .cluster_name(cluster)
            .nodegroup_name(name)
            // One token per logical update, the same on every retry of it.
            .client_request_token(fresh_token("gputf-update"));
        if let Some(s) = delta.scaling {
            call = call.scaling_config(scaling_to_sdk(s)?);
        }
        if !delta.labels_add.is_empty() || !delta.labels_remove.is_empty() {
            call = call.labels(
                UpdateLabelsPayload::builder()
                    .set_add_or_update_labels(map_or_none(&delta.labels_add))
                    .set_remove_labels(vec_or_none(&delta.labels_remove))
                    .build(),
            );
        }
        if !delta.taints_add.is_empty() || !delta.taints_remove.is_empty() {
            let sdk = |ts: &[crate::seam::Taint]| {
                vec_or_none(&ts.iter().map(taint_to_sdk).collect::<Vec<_>>())
            };
            call = call.taints(
                UpdateTaintsPayload::builder()
                    .set_add_or_update_taints(sdk(&delta.taints_add))
                    .set_remove_taints(sdk(&delta.taints_remove))
                    .build(),
            );
        }
        send(
            &self.retry,
            &self.pace,
            &self.cancel,
            "UpdateNodegroupConfig",
            || call.clone().send(),
        )
        .await
        .map_err(in_use_is_busy)?;
        Ok(())
    }

    /// Adds or overwrites `add` and removes `remove` on the resource `arn` (tags are not
    /// part of EKS's config update).
    async fn retag(
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
            send(&self.retry, &self.pace, &self.cancel, "TagResource", || {
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
            send(
                &self.retry,
                &self.pace,
                &self.cancel,
                "UntagResource",
                || call.clone().send(),
            )
            .await?;
        }
        Ok(())
    }
}

/// The EKS name of `cluster`; any other cloud's cluster is refused before a call.
fn eks_name(cluster: &ClusterRef) -> Result<&str, CloudError> {
    match cluster {
        ClusterRef::Eks { name, .. } => Ok(name),
        other => Err(CloudError::Invalid(format!(
            "{other} is not an EKS cluster"
        ))),
    }
}

/// `ResourceInUseException` on an update or delete of a node group ("The specified
/// resource is in use": another update of the group, or of its cluster, is running) is
/// busy: nothing was done and the same call can be sent once that ends. (On a create it
/// means the name is taken, a conflict.)
fn in_use_is_busy(e: CloudError) -> CloudError {
    match e {
        CloudError::Conflict(m) if m.contains("ResourceInUseException") => CloudError::Busy(m),
        other => other,
    }
}

#[async_trait::async_trait]
impl NodeGroups for Eks {
    /// EKS runs operations on different node groups of a cluster in parallel: no turn is
    /// taken ([`NodeGroups::take_turn`]'s default); a node group mid-update answers
    /// `ResourceInUseException`, which its update and delete read as busy.
    async fn pause(&self, pause: Duration) -> Result<(), CloudError> {
        poll::pause(&self.pace, &self.cancel, pause).await
    }

    fn now(&self) -> Duration {
        self.pace.now()
    }

    fn traits(&self) -> &'static CloudTraits {
        &super::rules::EKS
    }

    async fn create_group(
        &self,
        cluster: &ClusterRef,
        spec: &GroupSpec,
        token: &str,
    ) -> Result<NodeGroup, CloudError> {
        let name = eks_name(cluster)?;
        super::rules::EKS
            .check_group(spec)
            .map_err(CloudError::Invalid)?;
        let NodeClass::Aws(class) = &spec.class else {
            return Err(CloudError::Invalid(
                "an EKS node group needs an AWS class".into(),
            ));
        };
        let subnets = match &class.subnets {
            Some(s) => s.clone(),
            None => self.cluster_subnets(name).await?,
        };
        if subnets.is_empty() {
            return Err(CloudError::Invalid(format!(
                "cluster {name} reports no subnets; set the pool's aws.subnet_ids"
            )));
        }
        let mut tags = spec.tags.clone();
        let reservation = class
            .capacity_reservation
            .as_ref()
            .filter(|_| spec.capacity != CapacityType::Spot);
        let template = match reservation {
            Some(r) => {
                let lt = launch_template_name(name, &spec.name);
                let id = self
                    .ensure_launch_template(&lt, r, &spec.tags, token)
                    .await?;
                tags.insert(convert::RESERVATION_TAG.to_string(), r.id.clone());
                Some(
                    aws_sdk_eks::types::LaunchTemplateSpecification::builder()
                        .id(id)
                        .version("1")
                        .build(),
                )
            }
            None => None,
        };
        // A capacity block's group is of capacity type CAPACITY_BLOCK.
        let capacity = match reservation {
            Some(r) if r.capacity_block => "CAPACITY_BLOCK",
            _ => convert::capacity_to_eks(spec.capacity),
        };
        let call = self
            .client
            .create_nodegroup()
            .cluster_name(name)
            .set_launch_template(template)
            .nodegroup_name(&spec.name)
            .capacity_type(CapacityTypes::from(capacity))
            .set_instance_types(Some(spec.machine_types.clone()))
            .ami_type(AmiTypes::from(class.ami_type.as_str()))
            .scaling_config(scaling_to_sdk(spec.scaling.resolved_against(None))?)
            .set_labels(map_or_none(&spec.labels))
            .set_taints(vec_or_none(
                &spec.taints.iter().map(taint_to_sdk).collect::<Vec<_>>(),
            ))
            .set_tags(map_or_none(&tags))
            .node_role(&class.node_role)
            .set_subnets(Some(subnets))
            // Without one the SDK generates a fresh token per call, so only a caller's
            // token makes a retried create idempotent.
            .client_request_token(token);
        let out = send(
            &self.retry,
            &self.pace,
            &self.cancel,
            "CreateNodegroup",
            || call.clone().send(),
        )
        .await?;
        let g = out
            .nodegroup()
            .ok_or_else(|| CloudError::Other("CreateNodegroup: no nodegroup in response".into()))?;
        Ok(self.note_template(node_group_from_sdk(g)?))
    }

    async fn get_group(
        &self,
        cluster: &ClusterRef,
        name: &str,
    ) -> Result<Option<NodeGroup>, CloudError> {
        let call = self
            .client
            .describe_nodegroup()
            .cluster_name(eks_name(cluster)?)
            .nodegroup_name(name);
        match send(
            &self.retry,
            &self.pace,
            &self.cancel,
            "DescribeNodegroup",
            || call.clone().send(),
        )
        .await
        {
            Ok(out) => out
                .nodegroup()
                .map(|g| node_group_from_sdk(g).map(|g| self.note_template(g)))
                .transpose(),
            Err(CloudError::NotFound(_)) => Ok(None),
            Err(other) => Err(other),
        }
    }

    async fn update_group(
        &self,
        cluster: &ClusterRef,
        live: &NodeGroup,
        want: &GroupSpec,
    ) -> Result<bool, CloudError> {
        let delta = ConfigDelta::between(&live.spec, want);
        let started = !delta.is_empty();
        if started {
            self.update_config(eks_name(cluster)?, &want.name, &delta)
                .await?;
        }
        let (add, remove) = tag_delta(&live.spec.tags, &want.tags);
        if !add.is_empty() || !remove.is_empty() {
            self.retag(&live.id, &add, &remove).await?;
        }
        Ok(started)
    }

    /// The group's running EC2 instances: EKS tags each with `eks:cluster-name` and
    /// `eks:nodegroup-name` ("Amazon EKS managed node groups … tags"), counted with one
    /// paged `DescribeInstances`. Without an EC2 client, no count.
    async fn nodes_up(
        &self,
        cluster: &ClusterRef,
        group: &NodeGroup,
    ) -> Result<Option<u32>, CloudError> {
        let Some(ec2) = self.ec2.as_ref() else {
            return Ok(None);
        };
        let filter = |name: &str, value: &str| {
            aws_sdk_ec2::types::Filter::builder()
                .name(name)
                .values(value)
                .build()
        };
        let filters = vec![
            filter("tag:eks:cluster-name", eks_name(cluster)?),
            filter("tag:eks:nodegroup-name", group.name()),
            filter("instance-state-name", "running"),
        ];
        let mut up = 0u32;
        let mut next: Option<String> = None;
        loop {
            let page = send(
                &self.retry,
                &self.pace,
                &self.cancel,
                "DescribeInstances",
                || {
                    ec2.describe_instances()
                        .set_filters(Some(filters.clone()))
                        .set_next_token(next.clone())
                        .send()
                },
            )
            .await?;
            let found: usize = page
                .reservations()
                .iter()
                .map(|r| r.instances().len())
                .sum();
            up += u32::try_from(found).unwrap_or(u32::MAX);
            match page.next_token().filter(|t| !t.is_empty()) {
                Some(t) if Some(t) != next.as_deref() => next = Some(t.to_string()),
                _ => break,
            }
        }
        Ok(Some(up))
    }

    async fn list_groups(&self, cluster: &ClusterRef) -> Result<Vec<String>, CloudError> {
        let name = eks_name(cluster)?;
        let mut names = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let call = self
                .client
                .list_nodegroups()
                .cluster_name(name)
                .set_next_token(next.clone());
            let out = send(
                &self.retry,
                &self.pace,
                &self.cancel,
                "ListNodegroups",
                || call.clone().send(),
            )
            .await?;
            names.extend(out.nodegroups().iter().cloned());
            next = out.next_token().map(str::to_string);
            if next.is_none() {
                return Ok(names);
            }
        }
    }

    async fn delete_group(&self, cluster: &ClusterRef, name: &str) -> Result<(), CloudError> {
        let call = self
            .client
            .delete_nodegroup()
            .cluster_name(eks_name(cluster)?)
            .nodegroup_name(name);
        send(
            &self.retry,
            &self.pace,
            &self.cancel,
            "DeleteNodegroup",
            || call.clone().send(),
        )
        .await
        .map_err(in_use_is_busy)?;
        Ok(())
    }

    async fn wait_until(
        &self,
        cluster: &ClusterRef,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError> {
        let result = poll::group(
            &self.pace,
            self.backoff,
            timeout,
            &self.cancel,
            &super::rules::EKS,
            cluster,
            name,
            target,
            || self.get_group(cluster, name),
        )
        .await?;
        // A deleted group's launch template (if it had one) goes with it.
        if target == WaitTarget::Deleted {
            self.delete_launch_template(eks_name(cluster)?, name)
                .await?;
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::super::codes::error_from_code;
    use super::*;

    #[test]
    fn a_node_group_in_use_is_busy_on_update_and_delete_only() {
        // What `error_from_code` makes of EKS's answer, as the update and delete see it.
        let in_use = error_from_code(
            Some("ResourceInUseException"),
            Some("The specified resource is in use"),
            Some(409),
        );
        assert!(
            matches!(in_use, CloudError::Conflict(_)),
            "a create's name taken"
        );
        assert!(matches!(in_use_is_busy(in_use), CloudError::Busy(m) if m.contains("in use")));
        let other = CloudError::Conflict("ResourceAlreadyExistsException: x".into());
        assert!(matches!(in_use_is_busy(other), CloudError::Conflict(_)));
    }
}
