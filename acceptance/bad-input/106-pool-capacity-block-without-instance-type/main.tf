# Bad input: an EKS pool whose floor runs on a capacity block, with the instance types
# left to the catalog: a capacity block holds one instance type, and others cannot launch
# into it.
# Expected: validate fails naming `instance_types`, asking for the block's one type.

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

resource "gpu_node_pool" "pool" { # <- error
  cloud     = "aws"
  region    = "us-east-1"
  cluster   = "train-east"
  name      = "pool"
  gpu       = "H100"
  gpu_count = 8
  min_nodes = 1
  max_nodes = 2

  capacity {
    spot          = true
    on_demand_min = 1
  }

  reservation {
    commitment_id    = "cr-0123456789abcdef0"
    kind             = "aws_capacity_block"
    usd_per_gpu_hour = 4.9
  }

  aws {
    node_role_arn = "arn:aws:iam::123456789012:role/eks-gpu-nodes"
  }
}
