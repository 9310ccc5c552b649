# Bad input: a capacity reservation without the provider's purchase guard: the plan fails and says what it would cost.
# Expected: plan fails naming `kind`.

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
  kind           = "aws_capacity_reservation" # <- error: the provider does not allow purchases
  region         = "us-east-1"
  zone           = "us-east-1a"
  instance_type  = "p5.48xlarge"
  instance_count = 1
}
