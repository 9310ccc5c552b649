# One 8x H100 pool that can live on EKS, AKS or GKE. Which cloud is one variable:
#
#   terraform plan  -var cloud=azure   # shows the replacement and the monthly difference
#   terraform apply -var cloud=azure   # creates the AKS pool, then destroys the EKS one
#
# The nodes carry the same labels and the same NVIDIA taint on every cloud, so the
# workload follows by changing one nodeSelector value (see deployment.yaml and README.md).

terraform {
  required_providers {
    gpu = {
      source = "gpu-tf/gpu"
    }
  }
}

variable "cloud" {
  description = "Where the pool runs: aws (EKS), azure (AKS) or gcp (GKE)."
  type        = string
  default     = "aws"

  validation {
    condition     = contains(["aws", "azure", "gcp"], var.cloud)
    error_message = "The cloud must be \"aws\", \"azure\" or \"gcp\"."
  }
}

variable "eks_cluster" {
  description = "Name of the existing EKS cluster in us-east-1."
  type        = string
  default     = "train-east"
}

variable "aks_cluster_id" {
  description = "ARM id of the existing AKS cluster in eastus."
  type        = string
  default     = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/ml-eastus/providers/Microsoft.ContainerService/managedClusters/train-eastus"
}

variable "gke_cluster" {
  description = "Path of the existing GKE cluster in us-central1 (projects/<project>/locations/<region-or-zone>/clusters/<name>)."
  type        = string
  default     = "projects/my-project/locations/us-central1/clusters/train"
}

variable "node_role_arn" {
  description = "IAM role of the EKS nodes (used on aws only)."
  type        = string
  default     = "arn:aws:iam::123456789012:role/eks-gpu-nodes"
}

variable "aws_endpoint" {
  description = "Endpoint of an AWS emulator for tests (e.g. moto at http://127.0.0.1:5000); null for real AWS."
  type        = string
  default     = null
}

variable "azure_endpoint" {
  description = "Azure Resource Manager endpoint of an emulator or private endpoint; null for https://management.azure.com."
  type        = string
  default     = null
}

variable "gcp_endpoint" {
  description = "Kubernetes Engine API endpoint of an emulator or private endpoint; null for https://container.googleapis.com."
  type        = string
  default     = null
}

locals {
  # Each cloud's region and cluster, in that cloud's own spelling. All three regions have
  # 8x H100 machines in the provider's catalog: p5.48xlarge (us-east-1), the
  # Standard_ND96is*_H100_v5 family (eastus) and a3-highgpu-8g (us-central1).
  places = {
    aws = {
      region  = "us-east-1"
      cluster = var.eks_cluster
    }
    azure = {
      region  = "eastus"
      cluster = var.aks_cluster_id
    }
    gcp = {
      region  = "us-central1"
      cluster = var.gke_cluster
    }
  }
  place = local.places[var.cloud]
}

# Credentials come from each cloud's usual chain, never from this file: see the
# Azure and Google Cloud credentials guides, and the IAM permissions guide for AWS.
provider "gpu" {
  aws {
    endpoints = var.aws_endpoint == null ? null : {
      eks = var.aws_endpoint
      ec2 = var.aws_endpoint
    }
  }

  azure {
    endpoint = var.azure_endpoint
  }

  gcp {
    endpoint = var.gcp_endpoint
  }
}

resource "gpu_node_pool" "train" {
  cloud   = var.cloud
  region  = local.place.region
  cluster = local.place.cluster
  name    = "train"

  gpu       = "H100"
  gpu_count = 8

  min_nodes = 1
  max_nodes = 4

  # One on-demand node always; up to three more on spot.
  capacity {
    spot          = true
    on_demand_min = 1
  }

  # Each cloud's own settings. Only the block of the pool's cloud is read; the other two
  # are ignored, so all three can stay here while the pool moves.
  aws {
    node_role_arn = var.node_role_arn
  }

  azure {
    os_sku     = "Ubuntu"
    gpu_driver = "install" # AKS installs the NVIDIA driver
  }

  gcp {
    image_type         = "COS_CONTAINERD"
    gpu_driver_version = "default" # GKE installs its default NVIDIA driver
  }

  # A new cloud, region or cluster replaces the pool. Create the new pool first, and
  # destroy the old one only once the new one is up, so there are always GPU nodes.
  lifecycle {
    create_before_destroy = true
  }
}

output "cost_summary" {
  description = "The one-line cost preview of the pool, as the plan warning shows it."
  value       = gpu_node_pool.train.cost_summary
}

output "monthly_usd" {
  description = "USD per month at min_nodes (730 hours), from the provider's price catalog."
  value       = gpu_node_pool.train.monthly_usd
}
