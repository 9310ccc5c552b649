# Bad input: a gpu_instance label that takes the provider's ownership marker.
# Expected: validate fails naming `labels["gpu-tf-instance"]`, saying use another key.

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
  cloud  = "gcp"
  region = "us-central1"
  zone   = "us-central1-a"
  gpu    = "L4"
  labels = {
    "gpu-tf-instance" = "mine" # <- error
  }
}
