# Bad input: a Google Cloud endpoint without a scheme.
# Expected: validate fails naming `gcp.endpoint`.

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
    project  = "ml"
    endpoint = "localhost:8080" # <- error
  }
}

data "gpu_models" "all" {}
