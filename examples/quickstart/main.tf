# Quick start: runs offline, with no cloud credentials (`make demo` plans it).
# The cheapest 8x H100 spot offer across AWS, Azure and Google Cloud, from the price
# catalog built into the provider, with the price's source and date.

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

# A node pool on the cheapest AWS offer: one on-demand node always, up to three spot
# nodes above it. `terraform plan` prices it from the catalog (see the warning line and
# the cost attributes) without calling AWS; `apply` would create EKS node groups in the
# cluster named here, with the node role given.
data "gpu_spot_offer" "aws_h100" {
  gpu       = "H100"
  gpu_count = 8
  clouds    = ["aws"]
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
  cloud          = data.gpu_spot_offer.aws_h100.cloud
  region         = data.gpu_spot_offer.aws_h100.region
  cluster        = var.cluster
  name           = "train"
  gpu            = data.gpu_spot_offer.aws_h100.gpu
  gpu_count      = data.gpu_spot_offer.aws_h100.gpu_count
  instance_types = [data.gpu_spot_offer.aws_h100.instance_type]
  min_nodes      = 1
  max_nodes      = 4

  capacity {
    spot          = true
    on_demand_min = 1
  }

  labels = {
    workload = "training"
  }

  aws {
    node_role_arn = var.node_role_arn
  }
}

output "train_pool_cost" {
  value = {
    monthly_usd     = gpu_node_pool.train.monthly_usd
    monthly_usd_max = gpu_node_pool.train.monthly_usd_max
    summary         = gpu_node_pool.train.cost_summary
  }
}
