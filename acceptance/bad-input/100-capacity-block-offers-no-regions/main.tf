# Bad input: capacity block offers asked in no region.
# Expected: validate fails naming `regions`.

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

data "gpu_capacity_block_offers" "o" {
  regions        = [] # <- error
  instance_type  = "p5.48xlarge"
  duration_hours = 48
}
