# Bad input: `min_availability` above 1 (availability is a share from 0 to 1).
# Expected: validate fails naming `min_availability` and its range.

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
  description = "The GKE fake (written by the test): a request a bad input let through would be counted there."
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
    endpoint = var.azure_endpoint
  }

  gcp {
    endpoint = var.gcp_endpoint
  }
}

data "gpu_offers" "h100" {
  gpu              = "H100"
  live             = true
  prefer_available = true
  min_availability = 1.5 # <- error
}
