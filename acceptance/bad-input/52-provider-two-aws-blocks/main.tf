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
    region = "us-east-1"
    endpoints = {
      ec2     = var.endpoint
      eks     = var.endpoint
      iam     = var.endpoint
      pricing = var.endpoint
      sts     = var.endpoint
    }
  }
  aws { # <- error
    region = "us-west-2"
  }
}

data "gpu_models" "all" {}
