# Bad input: an unknown cloud in the clouds filter.
# Expected: validate fails naming `clouds[1]`.

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
  gpu    = "H100"
  clouds = ["aws", "ibm"] # <- error
}
