# Bad input: an Azure region where the catalog has no 8x H100 VM size.
# Expected: validate fails naming `region`.

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

resource "gpu_node_pool" "pool" {
  cloud     = "azure"
  region    = "brazilsouth" # <- error
  cluster   = "/subscriptions/0b1f6471-1bf0-4dda-aec3-cb9272f09590/resourceGroups/ml/providers/Microsoft.ContainerService/managedClusters/train"
  name      = "pool"
  gpu       = "H100"
  gpu_count = 8
  min_nodes = 1
  max_nodes = 2
}
