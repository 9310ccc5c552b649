# Bad input: two aws blocks in the provider.
# Expected: validate fails naming `aws`.

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
  aws { # <- error
    profile = "second"
  }
}

data "gpu_models" "all" {}
