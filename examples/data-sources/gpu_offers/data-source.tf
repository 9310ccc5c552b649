# The ten cheapest ways to get at least 4 GPUs with 80 GiB or more each, spot or on-demand.
data "gpu_offers" "big" {
  min_gpu_count      = 4
  min_gpu_memory_gib = 80
  clouds             = ["aws", "azure", "gcp"]
  limit              = 10
}

output "ranked" {
  value = [for o in data.gpu_offers.big.offers : format("%-6s %-16s %-22s %dx%-9s %-9s $%.2f/GPU-hour", o.cloud, o.region, o.instance_type, o.gpu_count, o.gpu, o.spot ? "spot" : "on-demand", o.price_per_gpu_hour)]
}

output "matched" {
  value = data.gpu_offers.big.matched
}
