# One p5.48xlarge (8x H100) for 48 hours, starting within the next eight weeks, bought as an
# EC2 Capacity Block for ML. The plan shows the offering, the money and the break-even
# before anyone approves it; the purchase cannot be undone.

variable "aws_endpoint" {
  description = "Endpoint of an EC2 emulator for tests; null for real AWS."
  type        = string
  default     = null
}

provider "gpu" {
  # Purchases must be allowed explicitly: without this the plan fails and says what it
  # would cost.
  allow_commitment_purchase = true
  aws {
    endpoints = var.aws_endpoint == null ? null : { ec2 = var.aws_endpoint }
  }
}

resource "gpu_commitment" "training_block" {
  kind           = "aws_capacity_block"
  region         = "us-east-1"
  instance_type  = "p5.48xlarge"
  instance_count = 1
  duration_hours = 48
  tags           = { team = "ml" }

  # A capacity block cannot be cancelled: destroy fails unless this is "forget" (it
  # then leaves state and keeps billing until its end).
  # on_destroy = "forget"
}

output "block" {
  value = {
    offering_id  = gpu_commitment.training_block.offering_id
    zone         = gpu_commitment.training_block.zone
    start        = gpu_commitment.training_block.start
    end          = gpu_commitment.training_block.end
    upfront_usd  = gpu_commitment.training_block.upfront_usd
    per_gpu_hour = gpu_commitment.training_block.effective_usd_per_gpu_hour
    break_even   = gpu_commitment.training_block.break_even_utilization
    status       = gpu_commitment.training_block.status
  }
}
