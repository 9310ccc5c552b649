# Bad input: a fractional GPU count on gpu_pool_placement.
# Expected: validate fails naming `gpu_count`.

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
  gpu_count = 1.5 # <- error
  min_nodes = 1
  max_nodes = 4
}
