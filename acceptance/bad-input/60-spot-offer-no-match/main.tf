# Bad input: filters no offer passes (read at plan time).
# Expected: plan fails naming `regions`.

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

data "gpu_spot_offer" "best" {
  gpu     = "H100"
  regions = ["antarctica-*"] # <- error
}
