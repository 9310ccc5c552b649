# Bad input: an endpoint for a service the provider does not call.
# Expected: validate fails naming `aws.endpoints["ec3"]`.

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
      ec3     = var.endpoint # <- error
    }
  }
}

data "gpu_models" "all" {}
