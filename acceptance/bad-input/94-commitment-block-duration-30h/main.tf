# Bad input: a capacity block of 30 hours (EC2 sells whole days).
# Expected: validate fails naming `duration_hours`.

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
  duration_hours = 30 # <- error
}
