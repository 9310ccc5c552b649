# Capacity blocks of one 8x H100 instance for 48 hours on offer in two regions over the
# next eight weeks, cheapest per GPU-hour first. Nothing is bought.

data "gpu_capacity_block_offers" "h100" {
  regions        = ["us-east-1", "us-west-2"]
  gpu            = "H100"
  gpu_count      = 8
  instance_count = 1
  duration_hours = 48
}

output "cheapest_block" {
  value = data.gpu_capacity_block_offers.h100.cheapest
}
