# Bad input: upfront billing on a Google Cloud commitment, which is billed monthly.
# Expected: validate fails naming `billing`.

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
  kind           = "gcp_commitment"
  region         = "us-central1"
  zone           = "us-central1-a"
  instance_type  = "a3-highgpu-8g"
  instance_count = 1
  term           = "1y"
  billing        = "upfront" # <- error
}
