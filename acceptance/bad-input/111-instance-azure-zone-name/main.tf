# Bad input: an Azure VM given a zone name instead of an availability zone number.
# Expected: validate fails naming `zone`, saying "1", "2", "3".

terraform {
  required_providers {
    gpu = { source = "gpu-tf/gpu" }
  }
}

variable "endpoint" {
  description = "The counting proxy in front of the AWS emulator (written by the test)."
  type        = string
}

variable "azure_endpoint" {
  description = "The Azure Resource Manager fake (written by the test): a request a bad input let through would be counted there."
  type        = string
}

variable "gcp_endpoint" {
  description = "The Google Cloud fake (written by the test): a request a bad input let through would be counted there."
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
    endpoint        = var.azure_endpoint
    subscription_id = "00000000-0000-0000-0000-000000000000"
  }

  gcp {
    endpoint = var.gcp_endpoint
    project  = "ml-project"
  }
}

resource "gpu_instance" "vm" {
  cloud  = "azure"
  region = "eastus"
  gpu    = "A100-80GB"
  zone   = "eastus-1" # <- error

  azure {
    resource_group = "ml"
    subnet_id      = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/ml/providers/Microsoft.Network/virtualNetworks/ml/subnets/gpu"
    ssh_public_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOmJ0yA4w0bNk4bS2q3rW2n1Q1bq9bqK3P2Yq2y3y3y3 ops@example.com"
  }
}
