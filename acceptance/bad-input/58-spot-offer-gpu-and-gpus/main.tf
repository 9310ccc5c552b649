# Bad input: one GPU and a list of GPUs together.
# Expected: validate fails naming `gpus`.

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

data "gpu_spot_offer" "best" {
  gpu  = "H100"
  gpus = ["A100-80GB", "H200"] # <- error
}
