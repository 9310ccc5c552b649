# Bad input: a Compute Engine zone written AWS-style (us-central1a).
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

resource "gpu_commitment" "c" {
  kind           = "gcp_reservation"
  region         = "us-central1"
  zone           = "us-central1a" # <- error
  instance_type  = "a3-highgpu-8g"
  instance_count = 1
}
