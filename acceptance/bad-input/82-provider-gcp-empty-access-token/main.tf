# Bad input: an empty Google access token.
# Expected: validate fails naming `gcp.access_token`.

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
  gcp {
    access_token = "" # <- error
  }
}

data "gpu_spot_offer" "h100" {
  gpu = "H100"
}
