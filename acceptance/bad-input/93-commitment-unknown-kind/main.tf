# Bad input: a commitment kind that does not exist.
# Expected: validate fails naming `kind`.

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
  kind           = "aws_block" # <- error
  region         = "us-east-1"
  instance_type  = "p5.48xlarge"
  instance_count = 1
  duration_hours = 48
}
