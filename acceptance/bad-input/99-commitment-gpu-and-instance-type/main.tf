# Bad input: a commitment given both a GPU and an instance type.
# Expected: validate fails naming `instance_type`.

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
  kind           = "aws_capacity_reservation"
  region         = "us-east-1"
  zone           = "us-east-1a"
  gpu            = "H100"
  instance_type  = "p5.48xlarge" # <- error
  instance_count = 1
}
