# Bad input: an exact and a minimum GPU count together.
# Expected: validate fails naming `min_gpu_count`.

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
  gpu           = "H100"
  gpu_count     = 8
  min_gpu_count = 4 # <- error
}
