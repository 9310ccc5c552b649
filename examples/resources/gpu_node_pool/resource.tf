# An 8x H100 pool (p5.48xlarge) in an existing EKS cluster in us-east-1: one on-demand
# node that is always there, and up to three more on spot. The plan prints the cost.

variable "cluster_name" {
  description = "Name of the existing EKS cluster the nodes join."
  type        = string
}

variable "node_role_arn" {
  description = "IAM role of the nodes (AmazonEKSWorkerNodePolicy, AmazonEKS_CNI_Policy, AmazonEC2ContainerRegistryReadOnly)."
  type        = string
}

variable "subnet_ids" {
  description = "Subnets for the nodes; null uses the cluster's subnets."
  type        = list(string)
  default     = null
}

variable "aws_endpoint" {
  description = "Endpoint of an AWS emulator for tests (e.g. moto at http://127.0.0.1:5000); null for real AWS."
  type        = string
  default     = null
}

variable "pool_name" {
  description = "Name of the pool: the node groups are <name>-od and <name>-spot (plus a generation suffix after a roll)."
  type        = string
  default     = "train"
}

provider "gpu" {
  aws {
    endpoints = var.aws_endpoint == null ? null : {
      eks = var.aws_endpoint
      ec2 = var.aws_endpoint
    }
  }

  # Cloud tags on every pool's node groups, for spend breakdown (not node labels).
  default_labels = {
    team    = "ml"
    project = "llm"
  }
}

resource "gpu_node_pool" "train" {
  cloud   = "aws"
  region  = "us-east-1"
  cluster = var.cluster_name
  name    = var.pool_name

  gpu       = "H100"
  gpu_count = 8 # p5.48xlarge

  min_nodes = 2
  max_nodes = 4

  # 1 on-demand node always (the <name>-od group); the rest are spot (<name>-spot).
  capacity {
    spot          = true
    on_demand_min = 1
  }

  # Nodes also get gpu.tf/cloud, gpu.tf/model, gpu.tf/capacity-type and gpu.tf/pool,
  # and the taint nvidia.com/gpu=present:NoSchedule.
  labels = {
    workload = "training"
    tier     = "batch"
  }

  taint {
    key    = "dedicated"
    value  = "training"
    effect = "NoSchedule"
  }

  tags = {
    cost-center = "research"
  }

  aws {
    node_role_arn = var.node_role_arn
    subnet_ids    = var.subnet_ids
  }
}

output "cost" {
  value = gpu_node_pool.train.cost_summary
}

output "node_groups" {
  value = [for g in gpu_node_pool.train.node_groups : "${g.name} (${g.capacity}, ${g.min_nodes}-${g.max_nodes} nodes)"]
}
