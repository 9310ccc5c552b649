# One spot GPU VM that is kept, not lost, when the cloud takes the capacity back: with
# reclaim = "stop" EC2 stops it (a persistent spot request with interruption behaviour
# "stop"), its EBS volume stays, and EC2 starts the same instance again when capacity
# returns. `terraform plan` stays empty meanwhile; `status` reads "stopped_by_reclaim".
# On Azure (eviction policy Deallocate) and Google Cloud (termination action STOP) the
# cloud does not restart it: run `terraform-provider-gpu watch` (examples/reclaim-watcher).

variable "aws_endpoint" {
  description = "Endpoint of an EC2 emulator for tests; null for real AWS."
  type        = string
  default     = null
}

provider "gpu" {
  default_labels = { team = "ml" }
  aws {
    endpoints = var.aws_endpoint == null ? null : { ec2 = var.aws_endpoint }
  }
}

resource "gpu_instance" "train" {
  cloud   = "aws"
  region  = "us-east-1"
  zone    = "us-east-1a"
  gpu     = "A10G" # the cheapest spot type with one A10G, chosen from the catalog
  spot    = true
  reclaim = "stop"

  # image: unset, the newest AWS Deep Learning Base OSS Nvidia Driver AMI (Ubuntu 22.04),
  # looked up and shown in the plan.
  disk_size_gb = 200
  labels       = { project = "llm-finetune" }
  user_data    = <<-EOT
    #cloud-config
    runcmd:
      - [nvidia-smi]
  EOT
}

output "status" {
  description = "running, stopped_by_reclaim, stopped (by a person), starting, stopping."
  value       = gpu_instance.train.status
}

output "monthly_usd" {
  description = "What the VM costs a month at 730 hours, at the spot price it was planned at."
  value       = gpu_instance.train.monthly_usd
}
