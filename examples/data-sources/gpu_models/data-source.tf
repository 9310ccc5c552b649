# Every GPU model the provider knows, sorted by name.
data "gpu_models" "all" {}

# NVIDIA GPUs with at least 80 GiB of memory each.
data "gpu_models" "large_nvidia" {
  vendor         = "nvidia"
  min_memory_gib = 80
}

output "all_names" {
  value = data.gpu_models.all.names
}

output "large_nvidia_memory_gib" {
  value = { for m in data.gpu_models.large_nvidia.models : m.name => m.memory_gib }
}
