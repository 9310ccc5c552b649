# Bad input: a capacity block window starting a year ahead (refused at plan, before the offerings are read).
# Expected: plan fails naming `start_after`.

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

resource "gpu_commitment" "c" {
  kind           = "aws_capacity_block"
  region         = "us-east-1"
  instance_type  = "p5.48xlarge"
  instance_count = 1
  duration_hours = 48
  start_after    = "2099-01-01" # <- error
}
