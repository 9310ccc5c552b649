# Bad input: a floor percentile of 150.
# Expected: validate fails naming `floor_percentile`.

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

data "gpu_commitment_sizing" "s" {
  hourly_gpus             = [8, 16, 8]
  commit_usd_per_gpu_hour = 2.1
  burst_usd_per_gpu_hour  = 6.9
  floor_percentile        = 150 # <- error
}
