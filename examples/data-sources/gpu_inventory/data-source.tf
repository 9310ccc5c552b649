# Every GPU node group of two clusters, every GPU VM and every commitment in the
# US regions, read live, priced, and totalled by team and cloud. Nothing is changed.

data "gpu_inventory" "us" {
  regions = ["us"]
  clusters = [
    "arn:aws:eks:us-east-1:123456789012:cluster/train-east",
    "projects/my-ml-project/locations/us-central1/clusters/gke-train",
  ]
  group_by = ["team"]
}

# Commitments that ran under half used at this read, and what their idle share costs.
output "idle_commitments" {
  value = [
    for i in data.gpu_inventory.us.items : "${i.cloud} ${i.name}: ${i.idle_monthly_usd} USD/month idle"
    if i.kind == "commitment" && coalesce(i.utilization, 1) < 0.5
  ]
}

# A budget across every pool, VM and commitment of a team: a failed check is a warning in
# `terraform plan` and `apply`, naming the team and its spend.
check "team_budgets" {
  assert {
    condition = alltrue([
      for t in data.gpu_inventory.us.totals : t.monthly_usd <= 250000 if t.group["team"] == "ml"
    ])
    error_message = "Team ml spends more than $250,000 a month on GPUs: ${jsonencode([for t in data.gpu_inventory.us.totals : { cloud = t.cloud, usd = t.monthly_usd } if t.group["team"] == "ml"])}."
  }
}
