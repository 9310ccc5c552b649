# Bad input: an AWS region without dashes.
# Expected: validate fails naming `aws.region`.

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
    region = "useast1" # <- error
    endpoints = {
      ec2     = var.endpoint
      eks     = var.endpoint
      iam     = var.endpoint
      pricing = var.endpoint
      sts     = var.endpoint
    }
  }
}

data "gpu_models" "all" {}
