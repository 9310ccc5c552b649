# Bad input: a taint without its required key.
# Expected: validate fails naming `taint[0].key`.

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
  cloud     = "aws"
  region    = "us-east-1"
  cluster   = "bad-input"
  name      = "pool"
  gpu       = "H100"
  gpu_count = 8
  min_nodes = 1
  max_nodes = 2

  taint { # <- error
    effect = "NoSchedule"
  }

  aws {
    node_role_arn = "arn:aws:iam::123456789012:role/nodes"
  }
}
