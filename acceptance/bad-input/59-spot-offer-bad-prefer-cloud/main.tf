# Bad input: hysteresis towards a cloud that does not exist.
# Expected: validate fails naming `prefer.cloud`.

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
  gpu = "H100"

  prefer {
    cloud         = "ibm" # <- error
    region        = "us-south"
    instance_type = "gx3.xlarge"
    spot          = true
  }
}
