# Bad input: a GKE pool told which reservation to consume twice: by a commitment's
# `reservation` block and by `gcp.reservation_affinity`.
# Expected: validate fails naming `gcp.reservation_affinity`, asking to keep one.

terraform {
  required_providers {
    gpu = { source = "gpu-tf/gpu" }
  }
}

variable "endpoint" {
  description = "The counting proxy in front of the AWS emulator (written by the test)."
  type        = string
}

variable "azure_endpoint" {
  description = "The Azure Resource Manager fake (written by the test): a request a bad input let through would be counted there."
  type        = string
}

variable "gcp_endpoint" {
  description = "The GKE fake (written by the test): a request a bad input let through would be counted there."
  type        = string
}

provider "gpu" {
  aws {
    endpoints = {
      ec2     = var.endpoint
      eks     = var.endpoint
      pricing = var.endpoint
    }
  }

  azure {
    endpoint = var.azure_endpoint
  }

  gcp {
    endpoint = var.gcp_endpoint
  }
}

resource "gpu_node_pool" "pool" {
  cloud     = "gcp"
  region    = "us-central1"
  cluster   = "projects/ml-project/locations/us-central1/clusters/train"
  name      = "pool"
  gpu       = "L4"
  gpu_count = 1
  min_nodes = 1
  max_nodes = 2

  capacity {
    spot          = true
    on_demand_min = 1
  }

  reservation {
    commitment_id    = "gpu-tf-0123456789abcdef"
    kind             = "gcp_commitment"
    usd_per_gpu_hour = 0.5
  }

  gcp {
    reservation_affinity = "any" # <- error
  }
}
