//! The schema of `gpu_node_pool`: what users write and what the provider computes.

use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::{Schema, Type};

/// Computed cost attributes: refreshed only when the pool changes, so a plan with no
/// change stays empty.
pub const COST_ATTRIBUTES: [&str; 15] = [
    "hourly_usd",
    "hourly_usd_max",
    "monthly_usd",
    "monthly_usd_max",
    "monthly_delta_usd",
    "on_demand_usd_per_node_hour",
    "spot_usd_per_node_hour",
    "spot_priced_at_on_demand",
    "price_source",
    "price_as_of",
    "on_demand_price_source",
    "on_demand_price_as_of",
    "spot_price_source",
    "spot_price_as_of",
    "cost_summary",
];

/// The attributes whose change replaces the pool: those the schema marks
/// `requires_replace` (cloud, region, cluster, name), read once.
pub fn replace_paths() -> &'static [tfplugin::AttributePath] {
    static PATHS: std::sync::LazyLock<Vec<tfplugin::AttributePath>> =
        std::sync::LazyLock::new(|| schema().block.replace_paths());
    &PATHS
}

/// The schema version: 1 made `node_groups` cloud-neutral (version 0 held EKS values).
pub const SCHEMA_VERSION: i64 = 1;

/// The cty type of one `node_groups` element.
pub fn node_group_type() -> Type {
    Type::object([
        ("name", Type::String),
        ("capacity", Type::String),
        ("instance_types", Type::list(Type::String)),
        ("image", Type::String),
        ("min_nodes", Type::Number),
        ("max_nodes", Type::Number),
        ("id", Type::String),
    ])
}

/// The resource's documentation: summary line first, then the EKS mapping, the cost
/// preview and import.
const DESCRIPTION: &str = include_str!("description.md");

/// The schema of `gpu_node_pool`.
pub fn schema() -> Schema {
    let block = Block::new(DESCRIPTION.trim_end())
    .attribute(Attribute::computed("id", Type::String).describe("The import id: `aws/<region>/<cluster>/<name>` (e.g. `aws/us-east-1/train-east/train`), `azure/<subscription>/<resource-group>/<cluster>/<name>` or `gcp/<project>/<location>/<cluster>/<name>`."))
    .attribute(Attribute::required("cloud", Type::String).describe("Cloud of the cluster: `aws` (EKS), `azure` (AKS) or `gcp` (GKE), in any letter case.").requires_replace())
    .attribute(Attribute::required("region", Type::String).describe("Region of the cluster, e.g. `us-east-1`.").requires_replace())
    .attribute(Attribute::required("cluster", Type::String).describe("The existing Kubernetes cluster the nodes join, as its cloud names it: the EKS cluster name on aws; on azure the AKS cluster's ARM id (`/subscriptions/<subscription>/resourceGroups/<group>/providers/Microsoft.ContainerService/managedClusters/<name>`); on gcp `projects/<project>/locations/<region-or-zone>/clusters/<name>`.").requires_replace())
    .attribute(Attribute::required("name", Type::String).describe("Name of the pool: nodes carry `gpu.tf/pool = <name>`. On EKS the node groups are `<name>-od` and `<name>-spot` (1–53 letters, digits, `-` or `_`); on GKE the node pools are `<name>-od` and `<name>-spot` in lower case; on AKS the agent pools get opaque 12-character names and the tag `gpu-tf-pool = <name>`. A generation suffix is added after a roll.").requires_replace())
    .attribute(Attribute::required("gpu", Type::String).describe("GPU model of every node, e.g. `H100`, `A100-80GB`, `L4` (see the `gpu_models` data source); any letter case or alias. Changing it rolls the node groups."))
    .attribute(Attribute::required("gpu_count", Type::Number).describe("GPUs per node; must be a size the cloud offers in the region (e.g. 8 for `p5.48xlarge`). Changing it rolls the node groups."))
    .attribute(Attribute::optional_computed("instance_types", Type::list(Type::String)).describe("Instance types of the nodes, a set (order and letter case mean nothing). When unset, up to 3 are chosen from the catalog at create (cheapest first, by spot price when spot is used) and kept; set it to pin them. Changing the set rolls the node groups."))
    .attribute(Attribute::required("min_nodes", Type::Number).describe("Fewest nodes (on-demand floor included). `0` lets the pool scale to zero when `capacity.on_demand_min` is 0."))
    .attribute(Attribute::required("max_nodes", Type::Number).describe("Most nodes (at least 1). The cost preview's `_max` figures are at this size."))
    .attribute(Attribute::optional("desired_nodes", Type::Number).describe("Nodes wanted now. Leave unset when a cluster autoscaler owns the count: the provider then never changes it (except to clamp it into a new `[min_nodes, max_nodes]`)."))
    .attribute(Attribute::optional("reclaim", Type::String).describe("What happens to a reclaimed spot VM: `delete` (the default). `stop` (keep the stopped VM and its disks) is supported on azure only (the AKS spot pool's eviction policy becomes `Deallocate`; changing it rolls the spot pool); EKS and GKE delete reclaimed spot VMs, so it is rejected there: a single VM kept stopped with its disks on any cloud is a `gpu_instance` with `reclaim = \"stop\"`."))
    .attribute(Attribute::optional("driver", Type::String).describe("Node image, which fixes the NVIDIA driver and CUDA version: `al2023_nvidia` (default, EKS `AL2023_x86_64_NVIDIA`) or `bottlerocket_nvidia` (EKS `BOTTLEROCKET_x86_64_NVIDIA`). EKS only: on AKS and GKE the driver is set in the `azure` / `gcp` block. Changing it rolls the node groups."))
    .attribute(Attribute::optional("labels", Type::map(Type::String)).describe("Kubernetes labels added to every node (the `gpu.tf/` prefix is reserved). Updated in place."))
    .attribute(Attribute::optional("tags", Type::map(Type::String)).describe("Cloud tags on the node groups, merged over the provider's `default_labels`; the pool adds its ownership tag (`gpu.tf/pool` on EKS, `gpu-tf-pool` on AKS and GKE). Use them for spend breakdown (`team`, `project`)."))
    .attribute(Attribute::optional("capacity_wait", Type::String).describe("How long one place may take to bring the pool's node groups up (EKS `ACTIVE`, AKS `Succeeded`, GKE `RUNNING`) when it is created there, as a duration like `15m` or `90s` (default `15m`). A place slower than that counts as a capacity failure (`timeout`): what was made there is deleted and the next `failover` place is tried.").validate(crate::checks::duration()))
    .attribute(Attribute::optional("failback", Type::String).describe("What a pool running on a `failover` place does at later applies: `never` (the default: it stays, and each plan warns where it runs and why) or `on_apply` (each plan shows an update that tries the earlier places again; the apply creates the pool there, waits for it, then deletes it from the failover place, and stays with a warning when they still say no).").validate(crate::checks::one_of(&crate::resources::placing::FAILBACK_WORDS)))
    .attribute(Attribute::computed("placement", super::places::placement_type()).describe("Where the pool runs now: `cloud`, `region`, `cluster` (as written in the pool or its `failover` block), `instance_type` (the first of the pool's instance types there) and `since` (RFC 3339: when an apply placed it there; null for a pool imported or made before this attribute). Unknown at plan only when the apply may place the pool: a create or replacement with `failover` blocks, or a failback."))
    .attribute(Attribute::computed("attempts", Type::list(crate::resources::placing::attempt_type())).describe("The places the last placing apply tried, in order: `cloud`, `region`, `outcome` (`ready`, `stockout`, `quota`, `not_offered` or `timeout`), `detail` (the cloud's code and message) and `seconds` from the first request there to its answer."))
    .attribute(Attribute::computed("node_groups", Type::list(node_group_type())).describe("The cloud node groups of the pool as last read, in the same shape on every cloud: `name`, `capacity` (`on-demand` or `spot`), `instance_types`, `image` (the node image type, e.g. EKS `AL2023_x86_64_NVIDIA`), `min_nodes`, `max_nodes`, `id` (the cloud's id of the group: an ARN on EKS)."))
    .attribute(Attribute::computed("time_to_ready_seconds", Type::Number).describe("Seconds from the first request to the cloud until the pool's node groups were ready as the cloud reports them (EKS `ACTIVE`, AKS `Succeeded`, GKE `RUNNING`), measured by the last apply that created the pool (from the first request at the first place tried, when it failed over), rolled its groups or moved it back; kept by other changes. The floor's nodes are counted in `floor_nodes_up`."))
    .attribute(Attribute::computed("floor_nodes_up", Type::Number).describe("How many nodes of the on-demand (or reserved) floor are up, by the cloud's own count, as of the last refresh or apply: on EKS the floor group's running EC2 instances (`DescribeInstances` by the `eks:cluster-name` and `eks:nodegroup-name` tags EKS puts on them), on AKS the agent pool's `count` once it has `Succeeded`, on GKE the instances of the pool's managed instance groups with no action pending (`currentActions.none`). Compare it with `capacity.on_demand_min`: fewer means the promised floor is not all there. Null for a pool without a floor, or while the cloud gives no count. Whether the nodes have joined Kubernetes is not checked."))
    .attribute(Attribute::computed("hourly_usd", Type::Number).describe("USD per hour at `min_nodes`: the on-demand floor at on-demand price (at the commitment's price with a `reservation` block) plus the rest at spot price."))
    .attribute(Attribute::computed("hourly_usd_max", Type::Number).describe("USD per hour at `max_nodes`."))
    .attribute(Attribute::computed("monthly_usd", Type::Number).describe("`hourly_usd` × 730 hours."))
    .attribute(Attribute::computed("monthly_usd_max", Type::Number).describe("`hourly_usd_max` × 730 hours."))
    .attribute(Attribute::computed("monthly_delta_usd", Type::Number).describe("Change of `monthly_usd` made by the planned change: against the prior state for an update, all of it for a create."))
    .attribute(Attribute::computed("on_demand_usd_per_node_hour", Type::Number).describe("Catalog price per node-hour used for on-demand nodes (the cheapest on-demand instance type); null when the pool has no on-demand nodes besides those on a `reservation`."))
    .attribute(Attribute::computed("spot_usd_per_node_hour", Type::Number).describe("Catalog price per node-hour used for spot nodes (the cheapest zone and type); null when the pool has no spot nodes."))
    .attribute(Attribute::computed("spot_priced_at_on_demand", Type::Bool).describe("True when the catalog has no spot price for these instance types, so spot nodes are priced at on-demand: the figures are an upper bound."))
    .attribute(Attribute::computed("price_source", Type::String).describe("Where the prices used came from: the sources of the on-demand and spot prices, joined."))
    .attribute(Attribute::computed("price_as_of", Type::String).describe("Date of the oldest price used; null when any price used is undated (see `on_demand_price_as_of` and `spot_price_as_of`)."))
    .attribute(Attribute::computed("on_demand_price_source", Type::String).describe("Source of the on-demand price used (catalog repository and file, or live API and fetch date); null when the pool has no on-demand nodes."))
    .attribute(Attribute::computed("on_demand_price_as_of", Type::String).describe("Date of the on-demand price used; null when that price is undated or the pool has no on-demand nodes."))
    .attribute(Attribute::computed("spot_price_source", Type::String).describe("Source of the price used for spot nodes (the on-demand price's when `spot_priced_at_on_demand`); null when the pool has no spot nodes."))
    .attribute(Attribute::computed("spot_price_as_of", Type::String).describe("Date of the price used for spot nodes; null when it is undated or the pool has no spot nodes."))
    .attribute(Attribute::computed("cost_summary", Type::String).describe("The cost preview in one line, e.g. `+$72,234.40/month, 1 on-demand + up to 3 spot p5.48xlarge in us-east-1 (up to $…/month at max_nodes)`: the plan warning's title and first line together."))
    .block(NestedBlock::single(
        "capacity",
        Block::new("Spot or on-demand. Without this block every node is on-demand.")
            .attribute(Attribute::optional("spot", Type::Bool).describe("Nodes above `on_demand_min` are spot (default `true` when the block is written)."))
            .attribute(Attribute::optional("on_demand_min", Type::Number).describe("On-demand nodes always kept (default 0), at most `max_nodes`. They form the `<name>-od` node group; the rest is the `<name>-spot` group.")),
    ))
    .block(NestedBlock::single(
        "reservation",
        Block::new("The commitment the on-demand floor runs on (a `gpu_commitment` of the pool's cloud): its nodes consume it, and the cost preview prices them at the commitment's price instead of on-demand. Supported: gcp `gcp_commitment` (the node pool `<name>-od` gets a specific reservation affinity to the reservation attached to the commitment, `<commitment_id>-r`) and `gcp_reservation` (to that reservation); azure `azure_capacity_reservation` (the on-demand agent pool is placed in the commitment's capacity reservation group, `capacityReservationGroupID`; the cluster's identity needs rights on that group, see the AKS docs) and `azure_reservation` (a billing discount Azure applies to matching VMs by itself: only the price changes). aws `aws_capacity_reservation` and `aws_capacity_block` (the `<name>-od` node group launches through a launch template the provider writes, `gpu-tf-<cluster>-<group>`, targeting the reservation, with market type `capacity-block` and node group capacity type `CAPACITY_BLOCK` for a block, and deleted with the group; `instance_types` must then be the reservation's one instance type, and `aws.subnet_ids` should be subnets of its zone). A capacity block's nodes start only once the block is active: apply the pool then, or its floor waits. Changing it rolls the on-demand node group.")
            .attribute(Attribute::required("commitment_id", Type::String).describe("The commitment's id, e.g. `gpu_commitment.floor.commitment_id` (may be unknown at plan when the commitment is bought in the same apply; an existing pool needs it known to change)."))
            .attribute(Attribute::required("kind", Type::String).describe("The commitment's kind, e.g. `gpu_commitment.floor.kind`."))
            .attribute(Attribute::required("usd_per_gpu_hour", Type::Number).describe("The commitment's price per GPU-hour, e.g. `gpu_commitment.floor.effective_usd_per_gpu_hour`: what the floor's nodes cost in the preview. Must be known at plan.")),
    ))
    .block(NestedBlock::list(
        "taint",
        Block::new("A Kubernetes taint added to every node, besides `nvidia.com/gpu=present:NoSchedule`. Updated in place.")
            .attribute(Attribute::required("key", Type::String).describe("Taint key."))
            .attribute(Attribute::optional("value", Type::String).describe("Taint value."))
            .attribute(Attribute::required("effect", Type::String).describe("`NoSchedule`, `PreferNoSchedule` or `NoExecute`.")),
    ))
    .block(NestedBlock::single(
        "aws",
        Block::new("Settings used when `cloud = \"aws\"` (ignored on other clouds, so one module can carry every cloud's settings).")
            .attribute(Attribute::optional("node_role_arn", Type::String).describe("IAM role the nodes run as (`arn:aws:iam::<account>:role/<name>`); required on aws. Changing it rolls the node groups."))
            .attribute(Attribute::optional_computed("subnet_ids", Type::list(Type::String)).describe("Subnets for the nodes; defaults to the cluster's subnets. Changing it rolls the node groups.")),
    ))
    .block(super::cloud_blocks::azure::azure_block())
    .block(super::cloud_blocks::gcp::gcp_block())
    .block(NestedBlock::list(
        "failover",
        Block::new("A place to try, in the order written, when the ones before it answer that they have no capacity (a stockout, a quota, an instance type not offered there) or do not bring the pool up within `capacity_wait`: the pool's own `cloud`, `region` and `cluster` come first. The pool's `aws`, `azure` and `gcp` blocks serve whichever place is on that cloud. Only a create (or a replacement, or a failback) walks the places; a pool that runs somewhere stays there (see `failback`).")
            .attribute(Attribute::required("cloud", Type::String).describe("`aws`, `azure` or `gcp`, in any letter case."))
            .attribute(Attribute::required("region", Type::String).describe("Region of the cluster."))
            .attribute(Attribute::required("cluster", Type::String).describe("The cluster as its cloud names it (see `cluster`).")),
    ))
    .block(NestedBlock::single(
        "timeouts",
        Block::new("How long one apply may wait for the cloud, as durations like `45m`, `1h30m`, `90s`. Each limit counts from the start of the apply and covers all the pool's node groups together, not each group on its own (time queued behind the same apply's other pools on an AKS or GKE cluster is not counted); a single call's retries can run a little past it.")
            .attribute(Attribute::optional("create", Type::String).describe("Until every created node group is ACTIVE (default `45m`)."))
            .attribute(Attribute::optional("update", Type::String).describe("Until every updated node group is ACTIVE again (default `45m`)."))
            .attribute(Attribute::optional("delete", Type::String).describe("Until every deleted node group is gone (default `30m`).")),
    ));
    Schema::new(block).version(SCHEMA_VERSION)
}
