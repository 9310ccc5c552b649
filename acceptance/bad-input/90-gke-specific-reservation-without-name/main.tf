# Bad input: a specific reservation affinity without the reservation's name.
# Expected: validate fails naming `gcp.reservation_affinity`, asking for `gcp.reservation_name`.

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

  gcp {
    reservation_affinity = "specific" # <- error
  }
}
