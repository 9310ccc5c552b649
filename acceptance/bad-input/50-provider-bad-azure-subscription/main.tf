# Bad input: an Azure subscription that is not a GUID.
# Expected: validate fails naming `azure.subscription_id`.

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
  azure {
    subscription_id = "my-subscription" # <- error
  }
}

data "gpu_models" "all" {}
