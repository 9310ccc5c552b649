# Quick start: runs offline, with no cloud credentials (`make demo` plans it).
# The cheapest 8x H100 spot offer across AWS, Azure and Google Cloud, from the price
# catalog built into the provider, with the price's source and date; then a node pool
# placed where its whole bill (on-demand floor + spot) is lowest, priced in the plan.

terraform {
  required_providers {
    gpu = {
      source = "gpu-tf/gpu"
    }
  }
}

provider "gpu" {
  default_labels = {
    team = "ml"
  }
}

data "gpu_spot_offer" "h100" {
  gpu       = "H100"
  gpu_count = 8
  clouds    = ["aws", "azure", "gcp"]
}

# The five cheapest on-demand alternatives, for comparison.
data "gpu_offers" "h100_on_demand" {
  gpu       = "H100"
  gpu_count = 8
  clouds    = ["aws", "azure", "gcp"]
  capacity  = "on_demand"
  limit     = 5
}

output "cheapest_h100_spot" {
  value = {
    where          = "${data.gpu_spot_offer.h100.cloud} ${data.gpu_spot_offer.h100.region} ${coalesce(data.gpu_spot_offer.h100.zone, "-")}"
    instance_type  = data.gpu_spot_offer.h100.instance_type
    usd_per_hour   = data.gpu_spot_offer.h100.price_per_hour
    usd_per_gpu_hr = data.gpu_spot_offer.h100.price_per_gpu_hour
    price_source   = data.gpu_spot_offer.h100.source
    price_as_of    = data.gpu_spot_offer.h100.as_of
  }
}

output "on_demand_alternatives" {
  value = [for o in data.gpu_offers.h100_on_demand.offers : format("%s %s %s: $%.4f/GPU-hour", o.cloud, o.region, o.instance_type, o.price_per_gpu_hour)]
}

# A node pool placed where its whole bill is lowest: one on-demand node always, up to
# three spot nodes above it, two nodes running on average. The spot-cheapest region is
# not the answer when the on-demand floor costs more there. (AWS's 8x H100 spot prices in
# the embedded catalog predate the 2025 P5 price cut and are on the stale list, so they
# are left out and the spot nodes are priced at the on-demand price, an upper bound; set
# `include_stale_prices = true` to count them.) This example places it on
# AWS (an EKS cluster is named below); pools run on AKS and GKE the same way, with the
# cluster's ARM id or GKE path and an `azure {}` or `gcp {}` block. `terraform plan`
# prices it from the catalog (see the warning line and the cost attributes) without
# calling AWS; `apply` would create EKS node groups in the cluster named here, with the
# node role given.
variable "current_place" {
  description = "Where the pool runs now ({ cloud, region, instance_type }), so that it stays there unless moving saves at least 15% a month; null for a new pool."
  type = object({
    cloud         = string
    region        = string
    instance_type = string
  })
  default = null
}

data "gpu_pool_placement" "train" {
  gpu                = "H100"
  gpu_count          = 8
  min_nodes          = 1
  max_nodes          = 4
  on_demand_min      = 1
  expected_nodes     = 2
  clouds             = ["aws"]
  min_saving_percent = 15

  dynamic "prefer" {
    for_each = var.current_place == null ? [] : [var.current_place]
    content {
      cloud         = prefer.value.cloud
      region        = prefer.value.region
      instance_type = prefer.value.instance_type
    }
  }
}

variable "cluster" {
  description = "The EKS cluster the pool joins."
  type        = string
  default     = "train-east"
}

variable "node_role_arn" {
  description = "IAM role the EKS nodes run as."
  type        = string
  default     = "arn:aws:iam::123456789012:role/eks-gpu-nodes"
}

resource "gpu_node_pool" "train" {
  cloud          = data.gpu_pool_placement.train.cloud
  region         = data.gpu_pool_placement.train.region
  cluster        = var.cluster
  name           = "train"
  gpu            = data.gpu_pool_placement.train.gpu
  gpu_count      = data.gpu_pool_placement.train.gpu_count
  instance_types = [data.gpu_pool_placement.train.instance_type]
  min_nodes      = data.gpu_pool_placement.train.min_nodes
  max_nodes      = data.gpu_pool_placement.train.max_nodes

  capacity {
    spot          = true
    on_demand_min = data.gpu_pool_placement.train.on_demand_min
  }

  labels = {
    workload = "training"
  }

  aws {
    node_role_arn = var.node_role_arn
  }
}

output "train_placement" {
  value = {
    where            = "${data.gpu_pool_placement.train.cloud} ${data.gpu_pool_placement.train.region} ${data.gpu_pool_placement.train.instance_type}"
    expected_monthly = data.gpu_pool_placement.train.monthly_usd
    bill             = [for l in data.gpu_pool_placement.train.lines : format("%d %s at $%.4f/h%s (%s, %s)", l.nodes, l.kind, l.usd_per_node_hour, l.spot_priced_at_on_demand ? ", the on-demand price: no current spot price" : "", l.source, l.as_of == null ? "undated" : "${l.as_of}, ${l.price_age_days} days old")]
    runner_up        = length(data.gpu_pool_placement.train.candidates) > 1 ? format("%s %s: $%.2f/month", data.gpu_pool_placement.train.candidates[1].region, data.gpu_pool_placement.train.candidates[1].instance_type, data.gpu_pool_placement.train.candidates[1].monthly_usd) : null
  }
}

output "train_pool_cost" {
  value = {
    monthly_usd     = gpu_node_pool.train.monthly_usd
    monthly_usd_max = gpu_node_pool.train.monthly_usd_max
    summary         = gpu_node_pool.train.cost_summary
  }
}
