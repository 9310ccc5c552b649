# Where an 8x H100 node pool costs least as a whole, across the three clouds with managed
# Kubernetes node pools: one on-demand node always (the floor), two nodes running on
# average (the second on spot), up to four. Ranked by the expected monthly bill (730 h),
# not by the spot price alone: a cheap spot region with an expensive floor loses.
data "gpu_pool_placement" "h100" {
  gpu            = "H100"
  gpu_count      = 8
  min_nodes      = 1
  max_nodes      = 4
  on_demand_min  = 1
  expected_nodes = 2
  clouds         = ["aws", "azure", "gcp"]

  # Hysteresis: the pool runs here today; it moves only when another place saves at
  # least 15% of the monthly bill, so a price change does not roll a running pool.
  prefer {
    cloud         = "aws"
    region        = "us-east-1"
    instance_type = "p5.48xlarge"
  }
  min_saving_percent = 15
}

output "where" {
  value = "${data.gpu_pool_placement.h100.cloud} ${data.gpu_pool_placement.h100.region} ${data.gpu_pool_placement.h100.instance_type}"
}

output "monthly_usd" {
  value = data.gpu_pool_placement.h100.monthly_usd
}

# Each line of the bill with where its price came from and how old it is.
output "bill" {
  value = [for l in data.gpu_pool_placement.h100.lines : format("%d %s x $%.2f/h = $%.0f/month (%s, %s%s)", l.nodes, l.kind, l.usd_per_node_hour, l.monthly_usd, l.source, coalesce(l.as_of, "undated"), try(format(", %d days old", l.price_age_days), ""))]
}

output "stayed" {
  value = data.gpu_pool_placement.h100.kept_preferred ? "kept the current place" : "moved: saves ${format("%.1f", data.gpu_pool_placement.h100.saving_percent)}%"
}
