# A pool is imported by its id, the same as its `id` attribute: the provider reads the
# pool's groups in that cluster (EKS node groups `<name>-od` and `<name>-spot`; GKE node
# pools `<name>-od` and `<name>-spot`; AKS agent pools found by their `gpu-tf-pool` tag).
terraform import gpu_node_pool.train aws/us-east-1/train-east/train
terraform import gpu_node_pool.train azure/00000000-0000-0000-0000-000000000000/rg-gpu/aks-train/train
terraform import gpu_node_pool.train gcp/my-ml-project/us-central1/gke-train/train
