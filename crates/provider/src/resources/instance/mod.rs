//! `gpu_instance`: one GPU VM kept stopped (not deleted) by a reclaim. The schema and the
//! raw inputs here; `cloud_blocks` (each cloud's block and import id), `plan`, `apply`
//! (apply and read), `import`, `model` (the typed values) and `resource` beside.

pub mod apply;
pub mod cloud_blocks;
pub mod failover;
pub mod import;
pub mod model;
pub mod places;
pub mod plan;
pub mod record;
pub mod resource;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_failover;

use gpu_core::freshness::Freshness;
use gpu_core::instance::InstanceConfig;
use tfplugin::schema::{Attribute, Block};
use tfplugin::{Schema, Tf, Type, Value};

use crate::model_values::{flag, opt, text};
use model::InstanceModel;

/// The resource's type name.
pub const TYPE_NAME: &str = "gpu_instance";

/// What instances need of the provider block: the commitments' settings (credentials,
/// endpoints, default labels, the stop signal) and which prices count.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Credentials, endpoints, `default_labels`, the stop signal.
    pub base: super::commitment::Settings,
    /// `max_price_age` and `include_stale_prices`.
    pub prices: Freshness,
}

/// Inputs whose change rolls the VM (compared by meaning).
pub const FIXED: &[&str] = &[
    "cloud",
    "region",
    "zone",
    "gpu",
    "gpu_count",
    "instance_type",
    "spot",
    "reclaim",
    "image",
    "disk_size_gb",
    "user_data",
    "aws",
    "azure",
    "gcp",
];

/// The schema of `gpu_instance`.
pub fn schema() -> Schema {
    let money = |n: &str, d: &str| Attribute::computed(n, Type::Number).describe(d);
    Schema::new(
        Block::new(include_str!("description.md"))
            .attribute(Attribute::computed("id", Type::String).describe("How the provider addresses the VM: EC2 `i-…`, Compute Engine `projects/<p>/zones/<z>/instances/<name>`, Azure the VM's ARM id."))
            .attribute(Attribute::required("cloud", Type::String).describe("`aws`, `azure` or `gcp` (any letter case)."))
            .attribute(Attribute::required("region", Type::String).describe("Region, e.g. `us-east-1`, `eastus`, `us-central1`."))
            .attribute(Attribute::optional_computed("zone", Type::String).describe("Zone: required on Google Cloud (`us-central1-a`); on AWS (`us-east-1a`) the subnet's zone when unset; on Azure an availability zone `1`, `2` or `3`, or none."))
            .attribute(Attribute::optional_computed("name", Type::String).describe("The VM's name (1 to 57 of lower-case letters, digits, `-`); generated (`gpu-` and 8 hex digits) when unset. A roll names the new VM `<name>-<4 hex>`."))
            .attribute(Attribute::optional("gpu", Type::String).describe("GPU model (any alias: `h100`, `NVIDIA L4`); the cheapest instance type with `gpu_count` of them is chosen from the catalog (by spot price with `spot`). Set this or `instance_type`."))
            .attribute(Attribute::optional("gpu_count", Type::Number).describe("GPUs on the VM with `gpu`, 1 to 16 (default 1)."))
            .attribute(Attribute::optional_computed("instance_type", Type::String).describe("Instance type / machine type / VM size; with `gpu`, the one chosen at create (kept afterwards)."))
            .attribute(Attribute::optional("spot", Type::Bool).describe("Spot (Azure Spot, Compute Engine Spot) instead of on-demand. Default false."))
            .attribute(Attribute::optional_computed("reclaim", Type::String).describe("What a reclaim does to a spot VM: `stop` (default: stopped with its disks, started again) or `delete`. Only with `spot = true`."))
            .attribute(Attribute::optional_computed("image", Type::String).describe("Boot image: an AMI id (`ami-…`), a Compute Engine image path (`projects/<p>/global/images/<image>` or `…/images/family/<family>`), or an Azure `publisher:offer:sku:version` or image ARM id. Default: the cloud's NVIDIA driver + CUDA image, looked up at create (AWS: the newest Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04); Google Cloud: the Deep Learning VM family `common-cu129-ubuntu-2204-nvidia-580`; Azure: `microsoft-dsvm:ubuntu-hpc:2204`, newest version)."))
            .attribute(Attribute::computed("image_description", Type::String).describe("What the image is (the AMI's name, the image family, the marketplace offer), when the provider chose it."))
            .attribute(Attribute::optional_computed("disk_size_gb", Type::Number).describe("Boot disk size in GB, 50 up to the cloud's limit (Azure 4095). Default 200."))
            .attribute(Attribute::optional("labels", Type::map(Type::String)).describe("Cloud tags (AWS, Azure) or labels (Google Cloud), over the provider's `default_labels`. The provider adds its ownership marker (`gpu.tf/instance` on AWS, `gpu-tf-instance` elsewhere). Changed in place."))
            .attribute(Attribute::optional("user_data", Type::String).sensitive().describe("User data / cloud-init, as text (the provider encodes it as each cloud wants). Stored in state like every input and readable by anyone who can read the VM's metadata in the cloud: keep secrets out of it."))
            .attribute(Attribute::computed("vm_name", Type::String).describe("The VM's name in its cloud: `name`, or `<name>-<4 hex>` after a roll."))
            .attribute(Attribute::computed("instance_id", Type::String).describe("The cloud's own unique id of the VM, which only a new VM changes: EC2 `i-…`, Compute Engine's numeric `id`, Azure's `vmId`."))
            .attribute(Attribute::computed("disk_ids", Type::list(Type::String)).describe("The VM's disks, boot disk first (EC2 `vol-…`, Compute Engine `projects/<p>/zones/<z>/disks/<d>`, Azure ARM ids); the same after a reclaim and restart."))
            .attribute(Attribute::computed("status", Type::String).describe("Read live: `running`, `starting`, `stopping`, `stopped_by_reclaim` (a reclaim stopped it: not drift, it is started again), `stopped` (a person or something else stopped it: left alone), `terminated`."))
            .attribute(Attribute::computed("time_to_ready_seconds", Type::Number).describe("Seconds from the launch request until the cloud reports the launch done (EC2: the instance `running`; Compute Engine: the insert operation `DONE`; Azure: the create operation `Succeeded`), measured by the apply that created the VM or rolled it to a new one; kept by other changes."))
            .attribute(Attribute::computed("last_reclaimed_at", Type::String).describe("When the latest reclaim the provider has seen stopped the VM (RFC 3339), or null."))
            .attribute(Attribute::computed("reclaims", Type::Number).describe("Reclaims the provider has seen on refresh (each reclaim counted once)."))
            .attribute(money("hourly_usd", "USD per hour: the catalog's spot price of the instance type with `spot`, else on-demand."))
            .attribute(money("monthly_usd", "`hourly_usd` × 730 hours."))
            .attribute(money("monthly_delta_usd", "Change of `monthly_usd` made by the planned change: against the prior state for an update, all of it for a create."))
            .attribute(Attribute::computed("spot_priced_at_on_demand", Type::Bool).describe("True when the catalog has no spot price for the type, so a spot VM is priced at on-demand: an upper bound."))
            .attribute(Attribute::computed("price_source", Type::String).describe("Where the price used came from."))
            .attribute(Attribute::computed("price_as_of", Type::String).describe("Date of the price used; null when undated."))
            .attribute(Attribute::computed("cost_summary", Type::String).describe("The one-line cost preview shown as a plan warning."))
            .attribute(Attribute::optional("capacity_wait", Type::String).describe("How long one place may take to bring the VM up (the launch done: EC2 `running`, the Compute Engine insert `DONE`, the Azure create `Succeeded`) when it is created there, as a duration like `15m` or `90s` (default `15m`). A place slower than that counts as a capacity failure (`timeout`): the VM made there is deleted with its disks and the next `failover` place is tried.").validate(crate::checks::duration()))
            .attribute(Attribute::optional("failback", Type::String).describe("What a VM running on a `failover` place does at later applies: `never` (the default: it stays, and each plan warns where it runs and why) or `on_apply` (each plan shows an update that tries the earlier places again; the apply creates a VM there, waits until it runs, then deletes the one on the failover place with its disks, and stays with a warning when they still say no).").validate(crate::checks::one_of(&crate::resources::placing::FAILBACK_WORDS)))
            .attribute(Attribute::computed("placement", places::placement_type()).describe("Where the VM runs now: `cloud`, `region`, `zone` (the VM's zone, or null where the cloud has none), `instance_type` and `since` (RFC 3339: when an apply placed it there; null for a VM imported or made before this attribute). Unknown at plan only when the apply may place the VM: a create or roll with `failover` blocks, or a failback."))
            .attribute(Attribute::computed("attempts", Type::list(crate::resources::placing::attempt_type())).describe("The places the last placing apply tried, in order: `cloud`, `region`, `outcome` (`ready`, `stockout`, `quota`, `not_offered` or `timeout`), `detail` (the cloud's code and message) and `seconds` from the launch request there to its answer."))
            .block(tfplugin::schema::NestedBlock::list(
                "failover",
                Block::new("A place to try, in the order written, when the ones before it answer that they have no capacity (a stockout, a quota, a type not offered there) or do not bring the VM up within `capacity_wait`: the VM's own `cloud`, `region` and `zone` come first. The `aws`, `azure` and `gcp` blocks serve whichever place is on that cloud. Only a create, a roll or a failback walks the places; a VM that runs somewhere stays there (see `failback`).")
                    .attribute(Attribute::required("cloud", Type::String).describe("`aws`, `azure` or `gcp`, in any letter case."))
                    .attribute(Attribute::required("region", Type::String).describe("Region."))
                    .attribute(Attribute::optional("zone", Type::String).describe("Zone, as for the VM's own `zone` (required on Google Cloud)."))
                    .attribute(Attribute::optional("instance_type", Type::String).describe("Instance type there; by default the one `gpu` chooses from the catalog for that place (required on another cloud when the VM sets `instance_type` instead of `gpu`).")),
            ))
            .block(cloud_blocks::aws::block())
            .block(cloud_blocks::azure::block())
            .block(cloud_blocks::gcp::block()),
    )
}

/// Whole numbers as written; a fraction becomes the core's "not a whole number".
fn int(t: &Tf<f64>) -> Option<i64> {
    t.known().map(|f| {
        if f.fract() == 0.0 {
            *f as i64
        } else {
            gpu_core::pool::validate::NOT_A_WHOLE_NUMBER
        }
    })
}

/// The core's raw config from a resource value: the config, or a planned or prior value whose
/// computed `instance_type` the caller has nulled when `gpu` chooses it.
pub fn core_config(v: &Value, settings: &Settings) -> InstanceConfig {
    let m = InstanceModel::of(v);
    InstanceConfig {
        cloud: text(&m.cloud),
        region: text(&m.region),
        zone: opt(&m.zone),
        name: opt(&m.name),
        gpu: opt(&m.gpu),
        gpu_count: int(&m.gpu_count),
        instance_type: opt(&m.instance_type),
        spot: flag(&m.spot),
        reclaim: opt(&m.reclaim),
        image: opt(&m.image),
        disk_size_gb: int(&m.disk_size_gb),
        labels: m.labels(&settings.base.default_labels),
        user_data: opt(&m.user_data),
        aws: cloud_blocks::aws::config(&m.aws),
        azure: cloud_blocks::azure::config(&m.azure),
        gcp: cloud_blocks::gcp::config(&m.gcp),
        default_gcp_project: settings.base.clouds.gcp_project().map(str::to_string),
    }
}
