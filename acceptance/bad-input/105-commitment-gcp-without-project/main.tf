# Bad input: a Google Cloud reservation with no gcp.project in the provider (refused at plan, before any call).
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
  allow_commitment_purchase = true
  aws {
    endpoints = {
      ec2     = var.endpoint
      eks     = var.endpoint
      pricing = var.endpoint
    }
  }
}

resource "gpu_commitment" "c" {
  kind           = "gcp_reservation" # <- error: the provider has no gcp.project
  region         = "us-central1"
  zone           = "us-central1-a"
  instance_type  = "a3-highgpu-8g"
  instance_count = 1
}
