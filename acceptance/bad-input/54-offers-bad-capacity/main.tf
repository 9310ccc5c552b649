# Bad input: a capacity kind that does not exist.
# Expected: validate fails naming `capacity`.

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

data "gpu_offers" "h100" {
  gpu      = "H100"
  capacity = "reserved" # <- error
}
