# Bad input: a price age in months (ambiguous) on gpu_offers.
# Expected: validate fails naming `max_price_age`.

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
  max_price_age = "3m" # <- error
}
