# Bad input: a driver number where GKE takes default, latest or disabled.
# Expected: validate fails naming `gcp.gpu_driver_version`.

terraform {
  required_providers {
    gpu = { source = "gpu-tf/gpu" }
  }
}

variable "endpoint" {
  description = "The counting proxy in front of the AWS emulator (written by the test)."
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
    gpu_driver_version = "535" # <- error
  }
}
