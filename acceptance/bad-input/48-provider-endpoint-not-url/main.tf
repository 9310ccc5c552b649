# Bad input: the proxy's address without its scheme (known at plan, so caught when the provider is configured).
# Expected: plan fails naming `aws.endpoints["eks"]`.

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
      eks     = trimprefix(var.endpoint, "http://") # <- error
      pricing = var.endpoint
    }
  }
}

data "gpu_models" "all" {}
