# Bad input: a tenant's domain name where its GUID is needed.
# Expected: validate fails naming `azure.tenant_id`.

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
    tenant_id = "contoso.onmicrosoft.com" # <- error
  }
}

data "gpu_spot_offer" "h100" {
  gpu = "H100"
}
