# Bad input: a default label key with a space.
# Expected: validate fails naming `default_labels["Team Name"]`.

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
  default_labels = {
    "Team Name" = "ml" # <- error
  }
}

data "gpu_models" "all" {}
