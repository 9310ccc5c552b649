# Bad input: an Azure availability zone written as a name.
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
  kind           = "azure_capacity_reservation"
  region         = "eastus"
  zone           = "eastus-1" # <- error
  instance_type  = "Standard_ND96isr_H100_v5"
  instance_count = 1
  azure {
    resource_group = "rg-gpu"
  }
}
