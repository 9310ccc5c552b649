# Bad input: a capacity reservation without the zone it holds capacity in.
# Expected: validate fails naming `zone`.

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

resource "gpu_commitment" "c" { # <- error: no zone
  kind           = "aws_capacity_reservation"
  region         = "us-east-1"
  instance_type  = "p5.48xlarge"
  instance_count = 1
}
