# Bad input: a commitment sizing given both a list and a CSV history.
# Expected: validate fails naming `hourly_gpus`.

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
  hourly_gpus             = [8, 16, 8] # <- error
  hourly_gpus_csv         = "8\n16\n8\n"
  commit_usd_per_gpu_hour = 2.1
  burst_usd_per_gpu_hour  = 6.9
}
