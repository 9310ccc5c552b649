# One 8x H100 pool that tries GKE first and lands on AKS when GKE says there is no
# capacity (a stockout, a quota, a machine type not offered there) or does not bring the
# pool up within `capacity_wait`:
#
#   terraform plan    # the cost warning names the order and the price at each place
#   terraform apply   # `placement` and `attempts` say where it landed and why
#
# Once placed, the pool stays where it is: later plans are empty and warn which failover
# place it runs on. With `-var failback=on_apply`, each apply tries GKE again, creating the
# pool there and deleting it from AKS only once the GKE node pools are up.

terraform {
  required_providers {
    gpu = {
      source = "gpu-tf/gpu"
    }
  }
}

variable "gke_cluster" {
  description = "Path of the GKE cluster tried first (projects/<project>/locations/<region-or-zone>/clusters/<name>)."
  type        = string
  default     = "projects/my-project/locations/us-central1/clusters/train"
}

variable "aks_cluster_id" {
  description = "ARM id of the AKS cluster in eastus tried next."
  type        = string
  default     = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/ml-eastus/providers/Microsoft.ContainerService/managedClusters/train-eastus"
}

variable "failback" {
  description = "\"never\" (stay on the failover place) or \"on_apply\" (try GKE again at each apply)."
  type        = string
  default     = "never"
}

variable "capacity_wait" {
  description = "How long a place may take to bring the pool up before the next is tried."
  type        = string
  default     = "15m"
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

# Credentials come from each cloud's usual chain, never from this file: see the Azure and
# Google Cloud credentials guides.
provider "gpu" {
  azure {
    endpoint = var.azure_endpoint
  }

  gcp {
    endpoint = var.gcp_endpoint
  }
}

resource "gpu_node_pool" "train" {
  # Tried first.
  cloud   = "gcp"
  region  = "us-central1"
  cluster = var.gke_cluster
  name    = "train"

  gpu       = "H100"
  gpu_count = 8

  min_nodes = 1
  max_nodes = 4

  capacity {
    spot          = true
    on_demand_min = 1
  }

  # Tried next, in the order written. Add more blocks for more places.
  failover {
    cloud   = "azure"
    region  = "eastus"
    cluster = var.aks_cluster_id
  }

  capacity_wait = var.capacity_wait
  failback      = var.failback

  # Each cloud's own settings serve whichever place is on that cloud.
  azure {
    os_sku     = "Ubuntu"
    gpu_driver = "install"
  }

  gcp {
    image_type         = "COS_CONTAINERD"
    gpu_driver_version = "default"
  }
}

output "placement" {
  description = "Where the pool runs: cloud, region, cluster, instance type, since when."
  value       = gpu_node_pool.train.placement
}

output "attempts" {
  description = "The places the placing apply tried, with each one's answer."
  value       = gpu_node_pool.train.attempts
}
