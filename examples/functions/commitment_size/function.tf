# How many GPUs to commit to, from a day of hourly demand: 4 GPUs for 18 hours, 10 for six.
locals {
  hourly_gpus = concat([for h in range(18) : 4], [for h in range(6) : 10])
  sizing      = provider::gpu::commitment_size(local.hourly_gpus, 2.10, 6.88)
}

output "commit_to" {
  value = {
    floor   = local.sizing.floor_gpus
    optimal = local.sizing.optimal_gpus
    saves   = local.sizing.curve[0].total_usd - local.sizing.optimal.total_usd
  }
}
