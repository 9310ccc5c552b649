//! EC2 VMs through aws-sdk-ec2: [`Ec2Instances`] implements [`Instances`] in one region.
//! A spot VM with `reclaim = stop` is a **persistent** spot request with interruption
//! behaviour `stop`: an interruption stops it (state reason `Server.SpotInstanceShutdown`,
//! EBS volumes kept) and EC2 itself starts the same instance again when capacity returns,
//! so the watcher only watches. `reclaim = delete` is a one-time request that terminates.
//!
//! Calls: `RunInstances` (a `ClientToken` kept across the retries of one launch),
//! `DescribeInstances` (by id, by the marker tag), `DescribeSpotInstanceRequests` (the
//! interruption behaviour), `DescribeVolumes` (the root disk's size), `DescribeImages`
//! (the default AMI, the AMI's root device), `StartInstances`, `CreateTags`/`DeleteTags`,
//! `CancelSpotInstanceRequests` then `TerminateInstances` (cancel first, or a persistent
//! request would launch a new instance).

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_ec2::types::{
    BlockDeviceMapping, EbsBlockDevice, Filter, Instance, InstanceInterruptionBehavior,
    InstanceMarketOptionsRequest, InstanceStateName, InstanceType, MarketType, Placement,
    ResourceType, SpotInstanceType, SpotMarketOptions, Tag, TagSpecification, VolumeType,
};
use base64::Engine as _;

use super::codes::error_from_code;
use super::commitments::Ec2Tuning;
use super::retrying::send;
use crate::offer::Cloud;
use crate::retry::{RetryPolicy, fresh_token};
use crate::seam::CloudError;
use crate::seam::instances::StopCause;
use crate::seam::instances::{
    GpuMachine, ImageRef, InstanceClass, Instances, LaunchSpec, LiveInstance, MARKER_TAG,
    PowerState, ReclaimPolicy,
};
use crate::seam::poll::{self, Backoff};

/// The AMI name pattern of the default image: AWS's Deep Learning Base AMI with the
/// open-source NVIDIA driver and CUDA on Ubuntu 22.04, the newest one wins.
pub const DLAMI_NAME: &str = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)*";
/// Owner alias of the Deep Learning AMIs.
pub const DLAMI_OWNER: &str = "amazon";

/// States of an instance that still exists (not being or already terminated).
const LIVE_STATES: [&str; 4] = ["pending", "running", "stopping", "stopped"];

/// How long a launch waits for `running` (spot requests can take minutes).
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// EC2 VMs of one region.
#[derive(Debug, Clone)]
pub struct Ec2Instances {
    client: aws_sdk_ec2::Client,
    region: String,
    opts: Ec2Tuning,
    /// Poll schedule of the wait for `running`.
    pub backoff: Backoff,
}

/// The spot request's side of an instance.
#[derive(Debug, Clone, Default)]
struct SpotSide {
    persistent: bool,
    behaviour: Option<String>,
}

fn tag_list(labels: &BTreeMap<String, String>) -> Vec<Tag> {
    labels
        .iter()
        .map(|(k, v)| Tag::builder().key(k).value(v).build())
        .collect()
}

fn tags_of(i: &Instance) -> BTreeMap<String, String> {
    i.tags()
        .iter()
        .filter_map(|t| Some((t.key()?.to_string(), t.value().unwrap_or("").to_string())))
        .collect()
}

fn power(state: Option<&InstanceStateName>) -> PowerState {
    match state.map(InstanceStateName::as_str) {
        Some("running") => PowerState::Running,
        Some("stopping") => PowerState::Stopping,
        Some("stopped") => PowerState::Stopped,
        Some("shutting-down" | "terminated") => PowerState::Terminated,
        _ => PowerState::Starting,
    }
}

/// The time in EC2's `StateTransitionReason` (`Service initiated (2026-12-05 10:00:00
/// GMT)`), unix seconds.
fn transition_time(reason: &str) -> Option<i64> {
    let open = reason.find('(')?;
    let inner = reason[open + 1..].trim_end_matches(')').trim();
    let stamp = inner.strip_suffix("GMT").unwrap_or(inner).trim();
    crate::time::parse_rfc3339(&format!("{}Z", stamp.replacen(' ', "T", 1)))
}

/// A filter of one name and values.
fn filter(name: &str, values: &[&str]) -> Filter {
    Filter::builder()
        .name(name)
        .set_values(Some(values.iter().map(|v| v.to_string()).collect()))
        .build()
}

impl Ec2Instances {
    /// VMs of `region`, with the loaded SDK config (credentials, profile) and `opts`
    /// (made by [`super::AwsSession::ec2_instances`]).
    pub(super) fn new(sdk: &aws_config::SdkConfig, region: &str, opts: Ec2Tuning) -> Self {
        Ec2Instances {
            client: super::clients::ec2_client(
                sdk,
                Some(region),
                opts.endpoint_url.as_deref(),
                opts.attempt_timeout,
            ),
            region: region.to_string(),
            opts,
            backoff: Backoff {
                initial: Duration::from_secs(2),
                max: Duration::from_secs(15),
            },
        }
    }

    fn policy(&self) -> RetryPolicy {
        self.opts.retry.unwrap_or_default()
    }

    /// Instances by id or filters, every page.
    async fn describe(
        &self,
        ids: Option<Vec<String>>,
        filters: Vec<Filter>,
    ) -> Result<Vec<Instance>, CloudError> {
        let mut out = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let page = send(
                &self.policy(),
                &self.opts.pace,
                &self.opts.cancel,
                "DescribeInstances",
                || {
                    self.client
                        .describe_instances()
                        .set_instance_ids(ids.clone())
                        .set_filters((!filters.is_empty()).then(|| filters.clone()))
                        .set_next_token(next.clone())
                        .send()
                },
            )
            .await?;
            for r in page.reservations() {
                out.extend(r.instances().iter().cloned());
            }
            match page.next_token() {
                Some(t) if !t.is_empty() && next.as_deref() != Some(t) => next = Some(t.into()),
                _ => return Ok(out),
            }
        }
    }

    /// One instance by id; `None` when EC2 does not know it or it is terminated.
    async fn read(&self, id: &str) -> Result<Option<Instance>, CloudError> {
        match self.describe(Some(vec![id.to_string()]), Vec::new()).await {
            Ok(list) => Ok(list.into_iter().find(|i| {
                i.instance_id() == Some(id)
                    && !matches!(
                        i.state()
                            .and_then(|s| s.name())
                            .map(InstanceStateName::as_str),
                        Some("terminated" | "shutting-down")
                    )
            })),
            Err(CloudError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn spot_side(&self, request_id: Option<&str>) -> Result<SpotSide, CloudError> {
        let Some(rid) = request_id else {
            return Ok(SpotSide::default());
        };
        let answer = send(
            &self.policy(),
            &self.opts.pace,
            &self.opts.cancel,
            "DescribeSpotInstanceRequests",
            || {
                self.client
                    .describe_spot_instance_requests()
                    .spot_instance_request_ids(rid)
                    .send()
            },
        )
        .await;
        let answer = match answer {
            Ok(a) => a,
            // A request EC2 has forgotten (long cancelled): the instance alone tells.
            Err(CloudError::NotFound(_)) => return Ok(SpotSide::default()),
            Err(e) => return Err(e),
        };
        Ok(answer
            .spot_instance_requests()
            .iter()
            .find(|r| r.spot_instance_request_id() == Some(rid))
            .map(|r| SpotSide {
                persistent: r.r#type().map(SpotInstanceType::as_str) == Some("persistent"),
                behaviour: r
                    .instance_interruption_behavior()
                    .map(|b| b.as_str().to_string()),
            })
            .unwrap_or_default())
    }

    /// Sizes (GiB) of `ids`.
    async fn volume_sizes(&self, ids: Vec<String>) -> Result<BTreeMap<String, u32>, CloudError> {
        if ids.is_empty() {
            return Ok(BTreeMap::new());
        }
        let answer = send(
            &self.policy(),
            &self.opts.pace,
            &self.opts.cancel,
            "DescribeVolumes",
            || {
                self.client
                    .describe_volumes()
                    .set_volume_ids(Some(ids.clone()))
                    .send()
            },
        )
        .await;
        match answer {
            Ok(a) => Ok(a
                .volumes()
                .iter()
                .filter_map(|v| Some((v.volume_id()?.to_string(), v.size()?.max(0) as u32)))
                .collect()),
            // A volume deleted between the two calls: its size is unknown, not an error.
            Err(CloudError::NotFound(_)) => Ok(BTreeMap::new()),
            Err(e) => Err(e),
        }
    }

    async fn live(&self, i: &Instance) -> Result<LiveInstance, CloudError> {
        let id = i.instance_id().unwrap_or_default().to_string();
        let state = power(i.state().and_then(|s| s.name()));
        let spot = i.instance_lifecycle().map(|l| l.as_str()) == Some("spot");
        let side = if spot {
            self.spot_side(i.spot_instance_request_id()).await?
        } else {
            SpotSide::default()
        };
        let reclaim = spot.then_some(match side.behaviour.as_deref() {
            Some("terminate") => ReclaimPolicy::Delete,
            _ => ReclaimPolicy::Stop,
        });
        let stop_cause = matches!(state, PowerState::Stopped | PowerState::Stopping)
            .then(|| ec2_stop_cause(i.state_reason().and_then(|r| r.code())));
        let last_reclaim = (stop_cause == Some(StopCause::Reclaim))
            .then(|| i.state_transition_reason().and_then(transition_time))
            .flatten();
        let root = i.root_device_name().unwrap_or("/dev/sda1");
        let mut mappings: Vec<(bool, String)> = i
            .block_device_mappings()
            .iter()
            .filter_map(|m| {
                Some((
                    m.device_name() != Some(root),
                    m.ebs()?.volume_id()?.to_string(),
                ))
            })
            .collect();
        mappings.sort_by_key(|(not_root, _)| *not_root);
        let disk_ids: Vec<String> = mappings.into_iter().map(|(_, v)| v).collect();
        let sizes = self
            .volume_sizes(disk_ids.first().cloned().into_iter().collect())
            .await?;
        let tags = tags_of(i);
        Ok(LiveInstance {
            unique_id: id.clone(),
            id,
            name: tags.get("Name").cloned().unwrap_or_default(),
            region: self.region.clone(),
            zone: i
                .placement()
                .and_then(|p| p.availability_zone())
                .map(str::to_string),
            machine_type: i
                .instance_type()
                .map(|t| t.as_str().to_string())
                .unwrap_or_default(),
            spot,
            reclaim,
            image: i.image_id().unwrap_or_default().to_string(),
            disk_size_gb: disk_ids
                .first()
                .and_then(|d| sizes.get(d))
                .copied()
                .unwrap_or(0),
            power: state,
            stop_cause,
            last_reclaim,
            disk_ids,
            labels: tags
                .into_iter()
                .filter(|(k, _)| !k.starts_with("aws:"))
                .collect(),
            restarts_itself: side.persistent && side.behaviour.as_deref() == Some("stop"),
        })
    }

    /// The root device name of `image` (`/dev/sda1` when EC2 does not say).
    async fn root_device(&self, image: &str) -> Result<String, CloudError> {
        let answer = send(
            &self.policy(),
            &self.opts.pace,
            &self.opts.cancel,
            "DescribeImages",
            || self.client.describe_images().image_ids(image).send(),
        )
        .await?;
        let found = answer
            .images()
            .iter()
            .find(|i| i.image_id() == Some(image))
            .ok_or_else(|| {
                CloudError::NotFound(format!("AMI {image} in {} (DescribeImages)", self.region))
            })?;
        Ok(found.root_device_name().unwrap_or("/dev/sda1").to_string())
    }

    async fn run(&self, spec: &LaunchSpec) -> Result<String, CloudError> {
        let InstanceClass::Aws {
            subnet_id,
            security_group_ids,
            key_name,
        } = &spec.class
        else {
            return Err(CloudError::Invalid("not an EC2 launch".into()));
        };
        let root = self.root_device(&spec.image).await?;
        let mut tags = spec.labels.clone();
        tags.insert("Name".into(), spec.name.clone());
        let spec_of = |kind: ResourceType| {
            TagSpecification::builder()
                .resource_type(kind)
                .set_tags(Some(tag_list(&tags)))
                .build()
        };
        let mut tag_specs = vec![
            spec_of(ResourceType::Instance),
            spec_of(ResourceType::Volume),
        ];
        let market = spec.spot.then(|| {
            tag_specs.push(spec_of(ResourceType::SpotInstancesRequest));
            let (kind, behaviour) = match spec.reclaim {
                ReclaimPolicy::Stop => (
                    SpotInstanceType::Persistent,
                    InstanceInterruptionBehavior::Stop,
                ),
                ReclaimPolicy::Delete => (
                    SpotInstanceType::OneTime,
                    InstanceInterruptionBehavior::Terminate,
                ),
            };
            InstanceMarketOptionsRequest::builder()
                .market_type(MarketType::Spot)
                .spot_options(
                    SpotMarketOptions::builder()
                        .spot_instance_type(kind)
                        .instance_interruption_behavior(behaviour)
                        .build(),
                )
                .build()
        });
        let user_data = spec
            .user_data
            .as_ref()
            .map(|d| base64::engine::general_purpose::STANDARD.encode(d.as_bytes()));
        let disk = BlockDeviceMapping::builder()
            .device_name(root)
            .ebs(
                EbsBlockDevice::builder()
                    .volume_size(spec.disk_size_gb as i32)
                    .volume_type(VolumeType::Gp3)
                    .delete_on_termination(true)
                    .build(),
            )
            .build();
        // One token for every repeat of this launch: EC2 answers a repeat with the
        // instance the first attempt started.
        let token = fresh_token(&spec.name);
        let answer = send(
            &self.policy(),
            &self.opts.pace,
            &self.opts.cancel,
            "RunInstances",
            || {
                self.client
                    .run_instances()
                    .client_token(&token)
                    .image_id(&spec.image)
                    .instance_type(InstanceType::from(spec.machine_type.as_str()))
                    .min_count(1)
                    .max_count(1)
                    .set_placement(
                        spec.zone
                            .as_ref()
                            .map(|z| Placement::builder().availability_zone(z).build()),
                    )
                    .set_subnet_id(subnet_id.clone())
                    .set_security_group_ids(
                        (!security_group_ids.is_empty()).then(|| security_group_ids.clone()),
                    )
                    .set_key_name(key_name.clone())
                    .set_user_data(user_data.clone())
                    .block_device_mappings(disk.clone())
                    .set_tag_specifications(Some(tag_specs.clone()))
                    .set_instance_market_options(market.clone())
                    .send()
            },
        )
        .await?;
        answer
            .instances()
            .first()
            .and_then(|i| i.instance_id())
            .map(str::to_string)
            .ok_or_else(|| CloudError::Other("RunInstances answered without an instance".into()))
    }

    /// Waits until `id` runs; a VM EC2 terminated on the way is an error with its reason.
    async fn wait_running(&self, id: &str) -> Result<LiveInstance, CloudError> {
        poll::until(
            &self.opts.pace,
            self.backoff,
            LAUNCH_TIMEOUT,
            &self.opts.cancel,
            &format!("EC2 instance {id} to run"),
            || async {
                let list = match self.describe(Some(vec![id.to_string()]), Vec::new()).await {
                    Ok(l) => l,
                    // Just launched: EC2's reads can lag its writes.
                    Err(CloudError::NotFound(_)) => return Ok(None),
                    Err(e) => return Err(e),
                };
                let Some(i) = list.into_iter().find(|i| i.instance_id() == Some(id)) else {
                    return Ok(None);
                };
                match power(i.state().and_then(|s| s.name())) {
                    PowerState::Running => self.live(&i).await.map(Some),
                    PowerState::Terminated => {
                        let why = i
                            .state_reason()
                            .map(|r| {
                                format!(
                                    "{}: {}",
                                    r.code().unwrap_or("?"),
                                    r.message().unwrap_or("")
                                )
                            })
                            .unwrap_or_else(|| "no state reason".into());
                        // A state reason's code is `Server.InsufficientInstanceCapacity`,
                        // `Client.InstanceInitiatedShutdown`, ...: the API code after the dot.
                        let e = error_from_code(
                            i.state_reason()
                                .and_then(|r| r.code())
                                .map(|c| c.rsplit('.').next().unwrap_or(c)),
                            Some(&format!("EC2 ended instance {id} before it ran ({why})")),
                            None,
                        );
                        Err(match e {
                            capacity if capacity.capacity_outcome().is_some() => capacity,
                            other => CloudError::Other(other.to_string()),
                        })
                    }
                    _ => Ok(None),
                }
            },
        )
        .await
    }

    async fn tag(
        &self,
        ids: &[String],
        set: &BTreeMap<String, String>,
        remove: &[String],
    ) -> Result<(), CloudError> {
        if !set.is_empty() {
            send(
                &self.policy(),
                &self.opts.pace,
                &self.opts.cancel,
                "CreateTags",
                || {
                    self.client
                        .create_tags()
                        .set_resources(Some(ids.to_vec()))
                        .set_tags(Some(tag_list(set)))
                        .send()
                },
            )
            .await?;
        }
        if !remove.is_empty() {
            send(
                &self.policy(),
                &self.opts.pace,
                &self.opts.cancel,
                "DeleteTags",
                || {
                    self.client
                        .delete_tags()
                        .set_resources(Some(ids.to_vec()))
                        .set_tags(Some(
                            remove
                                .iter()
                                .map(|k| Tag::builder().key(k).build())
                                .collect(),
                        ))
                        .send()
                },
            )
            .await?;
        }
        Ok(())
    }
}

#[async_trait]
impl Instances for Ec2Instances {
    fn cloud(&self) -> Cloud {
        Cloud::Aws
    }

    fn pace(&self) -> crate::pace::Pace {
        self.opts.pace
    }

    async fn default_image(&self, region: &str) -> Result<ImageRef, CloudError> {
        if region != self.region {
            return Err(CloudError::Invalid(format!(
                "this EC2 client is for {}, not {region}",
                self.region
            )));
        }
        let answer = send(
            &self.policy(),
            &self.opts.pace,
            &self.opts.cancel,
            "DescribeImages",
            || {
                self.client
                    .describe_images()
                    .owners(DLAMI_OWNER)
                    .filters(filter("name", &[DLAMI_NAME]))
                    .filters(filter("state", &["available"]))
                    .filters(filter("architecture", &["x86_64"]))
                    .send()
            },
        )
        .await?;
        let newest = answer
            .images()
            .iter()
            .filter(|i| i.image_id().is_some())
            .max_by(|a, b| {
                a.creation_date()
                    .unwrap_or("")
                    .cmp(b.creation_date().unwrap_or(""))
            })
            .ok_or_else(|| {
                CloudError::NotFound(format!(
                    "no AMI named {DLAMI_NAME:?} owned by {DLAMI_OWNER} in {region}: set `image`"
                ))
            })?;
        Ok(ImageRef {
            id: newest.image_id().unwrap_or_default().to_string(),
            description: format!(
                "{} (AWS Deep Learning Base AMI: NVIDIA driver and CUDA)",
                newest.name().unwrap_or("unnamed AMI")
            ),
        })
    }

    async fn launch(&self, spec: &LaunchSpec) -> Result<LiveInstance, CloudError> {
        let id = match self.find(spec).await? {
            // Running, or stopped since (a reclaim, a person): as it is.
            Some(vm) if vm.power != PowerState::Starting => return Ok(vm),
            Some(vm) => vm.id,
            None => self.run(spec).await?,
        };
        self.wait_running(&id).await
    }

    async fn get(&self, id: &str) -> Result<Option<LiveInstance>, CloudError> {
        if !id.starts_with("i-") {
            return Err(CloudError::Invalid(format!(
                "{id:?} is not an EC2 instance id (`i-…`)"
            )));
        }
        match self.read(id).await? {
            Some(i) => self.live(&i).await.map(Some),
            None => Ok(None),
        }
    }

    async fn find(&self, spec: &LaunchSpec) -> Result<Option<LiveInstance>, CloudError> {
        let Some(key) = spec.labels.get(MARKER_TAG) else {
            return Ok(None);
        };
        let list = self
            .describe(
                None,
                vec![
                    filter(&format!("tag:{MARKER_TAG}"), &[key]),
                    filter("instance-state-name", &LIVE_STATES),
                ],
            )
            .await?;
        match list.first() {
            Some(i) => self.live(i).await.map(Some),
            None => Ok(None),
        }
    }

    async fn list_managed(&self) -> Result<Vec<LiveInstance>, CloudError> {
        let list = self
            .describe(
                None,
                vec![
                    filter("tag-key", &[MARKER_TAG]),
                    filter("instance-state-name", &LIVE_STATES),
                ],
            )
            .await?;
        let mut out = Vec::with_capacity(list.len());
        for i in &list {
            out.push(self.live(i).await?);
        }
        Ok(out)
    }

    async fn list_gpu(&self, gpu: &GpuMachine<'_>) -> Result<Vec<LiveInstance>, CloudError> {
        let list = self
            .describe(None, vec![filter("instance-state-name", &LIVE_STATES)])
            .await?;
        let mut out = Vec::new();
        for i in &list {
            let ours = i.tags().iter().any(|t| t.key() == Some(MARKER_TAG));
            let machine = i.instance_type().map(|t| t.as_str()).unwrap_or_default();
            if ours || gpu(machine) {
                out.push(self.live(i).await?);
            }
        }
        Ok(out)
    }

    async fn start(&self, id: &str) -> Result<(), CloudError> {
        send(
            &self.policy(),
            &self.opts.pace,
            &self.opts.cancel,
            "StartInstances",
            || self.client.start_instances().instance_ids(id).send(),
        )
        .await
        .map(|_| ())
    }

    async fn set_labels(
        &self,
        id: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), CloudError> {
        let i = self
            .read(id)
            .await?
            .ok_or_else(|| CloudError::NotFound(format!("EC2 instance {id}")))?;
        let now = tags_of(&i);
        let kept = |k: &str| k == MARKER_TAG || k == "Name" || k.starts_with("aws:");
        let set: BTreeMap<String, String> = labels
            .iter()
            .filter(|(k, v)| !kept(k) && now.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let remove: Vec<String> = now
            .keys()
            .filter(|k| !kept(k) && !labels.contains_key(*k))
            .cloned()
            .collect();
        // The instance and its volumes carry the same tags (cost allocation by team).
        let mut ids = vec![id.to_string()];
        ids.extend(
            i.block_device_mappings()
                .iter()
                .filter_map(|m| m.ebs()?.volume_id().map(str::to_string)),
        );
        self.tag(&ids, &set, &remove).await
    }

    async fn delete(&self, id: &str) -> Result<(), CloudError> {
        let Some(i) = self.read(id).await? else {
            return Ok(());
        };
        if let Some(rid) = i.spot_instance_request_id() {
            // First the request: a persistent one would launch a new instance otherwise.
            match send(
                &self.policy(),
                &self.opts.pace,
                &self.opts.cancel,
                "CancelSpotInstanceRequests",
                || {
                    self.client
                        .cancel_spot_instance_requests()
                        .spot_instance_request_ids(rid)
                        .send()
                },
            )
            .await
            {
                Ok(_) | Err(CloudError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        match send(
            &self.policy(),
            &self.opts.pace,
            &self.opts.cancel,
            "TerminateInstances",
            || self.client.terminate_instances().instance_ids(id).send(),
        )
        .await
        {
            Ok(_) | Err(CloudError::NotFound(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_reasons_give_their_time() {
        assert_eq!(
            transition_time("Service initiated (2026-12-05 10:00:00 GMT)"),
            crate::time::parse_rfc3339("2026-12-05T10:00:00Z")
        );
        assert_eq!(transition_time(""), None);
        assert_eq!(transition_time("User initiated"), None);
    }

    #[test]
    fn states_read_as_ec2_writes_them() {
        assert_eq!(
            power(Some(&InstanceStateName::Stopped)),
            PowerState::Stopped
        );
        assert_eq!(
            power(Some(&InstanceStateName::ShuttingDown)),
            PowerState::Terminated
        );
        assert_eq!(
            power(Some(&InstanceStateName::Pending)),
            PowerState::Starting
        );
        assert_eq!(power(None), PowerState::Starting);
    }
}

/// The cause of a stopped EC2 instance from its `StateReason.Code` (EC2 API reference,
/// `StateReason`): `Server.SpotInstanceShutdown` is a spot interruption with behaviour
/// stop; `Client.UserInitiatedShutdown` (the API) and `Client.InstanceInitiatedShutdown`
/// (`shutdown` inside the instance) are a person.
fn ec2_stop_cause(state_reason_code: Option<&str>) -> StopCause {
    match state_reason_code.map(str::trim) {
        Some("Server.SpotInstanceShutdown") => StopCause::Reclaim,
        Some("Client.UserInitiatedShutdown" | "Client.InstanceInitiatedShutdown") => {
            StopCause::Person
        }
        Some("Server.ScheduledStop") => StopCause::Other("scheduled retirement".into()),
        Some(c) if !c.is_empty() => StopCause::Other(c.to_string()),
        _ => StopCause::Other("no state reason".into()),
    }
}

#[cfg(test)]
mod stop_cause_tests {
    use super::*;

    #[test]
    fn ec2_state_reasons_tell_a_reclaim_from_a_person() {
        assert_eq!(
            ec2_stop_cause(Some("Server.SpotInstanceShutdown")),
            StopCause::Reclaim
        );
        assert!(ec2_stop_cause(Some("Server.SpotInstanceShutdown")).restartable());
        for person in [
            "Client.UserInitiatedShutdown",
            "Client.InstanceInitiatedShutdown",
        ] {
            assert_eq!(ec2_stop_cause(Some(person)), StopCause::Person);
            assert!(!ec2_stop_cause(Some(person)).restartable());
        }
        assert_eq!(
            ec2_stop_cause(Some("Server.ScheduledStop")),
            StopCause::Other("scheduled retirement".into())
        );
        // A terminated spot instance is not a stopped one: never restartable.
        assert!(!ec2_stop_cause(Some("Server.SpotInstanceTermination")).restartable());
        assert!(!ec2_stop_cause(None).restartable());
    }
}
