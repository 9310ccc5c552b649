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
    region = "us-east-1"
    endpoints = {
      ec2     = var.endpoint
      eks     = var.endpoint
      iam     = var.endpoint
      pricing = var.endpoint
      sts     = var.endpoint
    }
  }
  gcp {
    project  = "ml"
    endpoint = "localhost:8080" # <- error
  }
}

data "gpu_models" "all" {}
