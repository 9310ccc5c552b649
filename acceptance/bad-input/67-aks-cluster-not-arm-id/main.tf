# Bad input: an AKS cluster named the EKS way (a bare name, not its ARM id).
# Expected: validate fails naming `cluster`, with the ARM id's shape.

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
}

resource "gpu_node_pool" "pool" {
  cloud     = "azure"
  region    = "eastus"
  cluster   = "bad-input" # <- error
  name      = "pool"
  gpu       = "H100"
  gpu_count = 8
  min_nodes = 1
  max_nodes = 2

  aws {
    node_role_arn = "arn:aws:iam::123456789012:role/nodes"
  }
}
