# Commit only to the floor of demand, burst above it on spot.
#
# 1. Size: from last month's hourly GPU demand (demand.csv), the floor (GPUs in use every
#    hour) and the count that would cost least, priced with Google Cloud's published
#    1-year committed-use rate against the catalog's on-demand price: what the floor,
#    which must be there every hour, would run on without a commitment. No cloud call.
#    (Against spot, the 1-year rate loses here: `floor_saves_vs_spot` is negative. Spot
#    can be reclaimed, so it bursts; it does not hold the floor.)
# 2. Buy the floor: a 1-year committed use discount for that many a3-highgpu-8g
#    (8x H100), with the zonal reservation Compute Engine requires for GPUs. The plan
#    shows its total, break-even and an IRREVERSIBLE warning before anyone approves it.
# 3. Burst: a GKE pool whose on-demand floor consumes the commitment's reservation (and is
#    priced at its rate) and whose nodes above the floor are spot.
#
# `terraform plan` works offline (prices come from the provider's vendored tables);
# `terraform apply` needs Google credentials (Application Default Credentials) and an
# existing GKE cluster. Buying needs `-var allow_purchase=true`: a committed use discount
# cannot be cancelled.

terraform {
  required_providers {
    gpu = {
      source = "gpu-tf/gpu"
    }
  }
}

variable "project" {
  description = "Google Cloud project that buys the commitment and runs the cluster."
  type        = string
  default     = "my-gpu-project"
}

variable "cluster" {
  description = "The GKE cluster the pool joins (its full resource name)."
  type        = string
  default     = "projects/my-gpu-project/locations/us-central1/clusters/train"
}

variable "allow_purchase" {
  description = "Set to true to let apply buy the commitment (it bills for a year)."
  type        = bool
  default     = false
}

variable "gcp_endpoint" {
  description = "Endpoint of Google API emulators for tests; null for Google Cloud."
  type        = string
  default     = null
}

provider "gpu" {
  allow_commitment_purchase = var.allow_purchase
  gcp {
    project  = var.project
    endpoint = var.gcp_endpoint
  }
}

locals {
  region        = "us-central1"
  zone          = "us-central1-b"
  gpus_per_node = 8
  floor_nodes   = floor(data.gpu_commitment_sizing.h100.floor_gpus / local.gpus_per_node)
}

# 1. How much demand is certain: the floor, and what committing to it saves.
data "gpu_commitment_sizing" "h100" {
  hourly_gpus_csv = file("${path.module}/demand.csv")
  cloud           = "gcp"
  region          = local.region
  gpu             = "H100"
  gpu_count       = local.gpus_per_node
  term            = "1y"
  burst_capacity  = "on_demand"
}

# 2. Buy the floor, and nothing above it: the optimum assumes next month is like the last;
#    the floor is what is certain.
resource "gpu_commitment" "floor" {
  kind           = "gcp_commitment"
  region         = local.region
  zone           = local.zone
  gpu            = "H100"
  gpu_count      = local.gpus_per_node
  instance_count = local.floor_nodes
  term           = "1y"
  tags           = { team = "ml" }
}

# 3. The floor runs on the commitment; everything above it on spot.
resource "gpu_node_pool" "train" {
  cloud     = "gcp"
  region    = local.region
  cluster   = var.cluster
  name      = "train"
  gpu       = "H100"
  gpu_count = local.gpus_per_node
  min_nodes = local.floor_nodes
  max_nodes = local.floor_nodes + 6

  capacity {
    spot          = true
    on_demand_min = local.floor_nodes
  }

  reservation {
    commitment_id    = gpu_commitment.floor.commitment_id
    kind             = gpu_commitment.floor.kind
    usd_per_gpu_hour = gpu_commitment.floor.effective_usd_per_gpu_hour
  }

  gcp {
    # The commitment's reservation is zonal: the floor's nodes must run in its zone.
    node_locations = [local.zone]
  }
}

output "sizing" {
  value = {
    floor_gpus             = data.gpu_commitment_sizing.h100.floor_gpus
    optimal_gpus           = data.gpu_commitment_sizing.h100.optimal_gpus
    break_even_utilization = data.gpu_commitment_sizing.h100.break_even_utilization
    floor_saves_vs_on_demand = data.gpu_commitment_sizing.h100.floor.savings_vs_on_demand_usd
    floor_saves_vs_spot      = data.gpu_commitment_sizing.h100.floor.savings_vs_spot_usd
    floor_utilization        = data.gpu_commitment_sizing.h100.floor.utilization
    prices_came_from       = data.gpu_commitment_sizing.h100.price_source
  }
}

output "commitment" {
  value = {
    nodes                      = gpu_commitment.floor.instance_count
    total_usd                  = gpu_commitment.floor.total_usd
    monthly_usd                = gpu_commitment.floor.monthly_usd
    effective_usd_per_gpu_hour = gpu_commitment.floor.effective_usd_per_gpu_hour
    on_demand_usd_per_gpu_hour = gpu_commitment.floor.on_demand_usd_per_gpu_hour
    break_even_utilization     = gpu_commitment.floor.break_even_utilization
  }
}

output "pool" {
  value = {
    monthly_usd     = gpu_node_pool.train.monthly_usd
    monthly_usd_max = gpu_node_pool.train.monthly_usd_max
    cost_summary    = gpu_node_pool.train.cost_summary
  }
}
