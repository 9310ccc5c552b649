# Bad input: a cloud without managed Kubernetes node pools on gpu_pool_placement.
# Expected: validate fails naming `clouds`.

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

data "gpu_pool_placement" "p" {
  gpu       = "H100"
  gpu_count = 8
  min_nodes = 1
  max_nodes = 4
  clouds    = ["cudo"] # <- error
}
