# How many H100s to commit to, from last month's usage: the floor (GPUs in use every
# hour) and the count that costs least, against bursting on demand in us-east-1.
data "gpu_commitment_sizing" "h100" {
  # One line per hour, GPUs in the last column (a header line is skipped).
  hourly_gpus_csv = file("${path.module}/demand.csv")

  # A 1-year commitment's price per GPU-hour: give the rate you were quoted. (On Google
  # Cloud, `term = "1y"` instead looks up the published committed-use rate.)
  commit_usd_per_gpu_hour = 2.10

  # Burst, on-demand and spot prices come from the provider's catalog.
  cloud          = "aws"
  region         = "us-east-1"
  gpu            = "H100"
  gpu_count      = 8
  burst_capacity = "on_demand"
}

output "commit_to" {
  value = {
    floor_gpus       = data.gpu_commitment_sizing.h100.floor_gpus
    optimal_gpus     = data.gpu_commitment_sizing.h100.optimal_gpus
    break_even       = data.gpu_commitment_sizing.h100.break_even_utilization
    optimal_saves    = data.gpu_commitment_sizing.h100.optimal.savings_vs_on_demand_usd
    floor_saves      = data.gpu_commitment_sizing.h100.floor.savings_vs_on_demand_usd
    prices_came_from = data.gpu_commitment_sizing.h100.price_source
  }
}
