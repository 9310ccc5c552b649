# Bad input: a negative price ceiling.
# Expected: validate fails naming `max_price_per_gpu_hour`.

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

data "gpu_offers" "cheap" {
  gpu                    = "H100"
  max_price_per_gpu_hour = -2 # <- error
}
