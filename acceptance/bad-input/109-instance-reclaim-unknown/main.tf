# Bad input: a spot gpu_instance whose reclaim policy is neither stop nor delete.
# Expected: validate fails naming `reclaim`, saying "stop".

terraform {
  required_providers {
    gpu = { source = "gpu-tf/gpu" }
  }
}

variable "endpoint" {
  description = "The counting proxy in front of the AWS emulator (written by the test)."
  type        = string
}

variable "azure_endpoint" {
  description = "The Azure Resource Manager fake (written by the test): a request a bad input let through would be counted there."
  type        = string
}

variable "gcp_endpoint" {
  description = "The Google Cloud fake (written by the test): a request a bad input let through would be counted there."
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

  azure {
    endpoint        = var.azure_endpoint
    subscription_id = "00000000-0000-0000-0000-000000000000"
  }

  gcp {
    endpoint = var.gcp_endpoint
    project  = "ml-project"
  }
}

resource "gpu_instance" "vm" {
  cloud  = "aws"
  region = "us-east-1"
  gpu     = "A10G"
  spot    = true
  reclaim = "pause" # <- error
}
