# `terraform query` (Terraform 1.14 or later) lists the pools this provider made in the
# clusters named, each by its identity; `-generate-config-out=pools.tf` writes an import
# block and a `gpu_node_pool` resource for each. Node groups someone else made are not
# listed (no `gpu_node_pool` takes their shape): `gpu_inventory` reports them.
list "gpu_node_pool" "all" {
  provider = gpu
  config {
    clusters = [
      "arn:aws:eks:us-east-1:123456789012:cluster/train-east",
      "projects/my-ml-project/locations/us-central1/clusters/gke-train",
    ]
  }
}
