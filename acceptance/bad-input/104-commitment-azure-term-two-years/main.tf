# Bad input: a two-year Azure reservation (terms are 1 or 3 years).
# Expected: validate fails naming `term`.

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
  kind           = "azure_reservation"
  region         = "eastus"
  instance_type  = "Standard_ND96isr_H100_v5"
  instance_count = 1
  term           = "2y" # <- error
}
