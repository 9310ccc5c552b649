# A pool is imported by `<cloud>/<region>/<cluster>/<name>`: the provider reads the node
# groups `<name>-od` and `<name>-spot` of that EKS cluster.
terraform import gpu_node_pool.train aws/us-east-1/train-east/train
