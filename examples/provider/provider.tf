provider "gpu" {
  # Each cloud block is optional; credentials come from the cloud's usual chain
  # (environment, shared config files, workload identity), never from this file.
  aws {
    profile = "ml-prod"
    # endpoints = { eks = "http://127.0.0.1:5000", ec2 = "http://127.0.0.1:5000" }
  }

  # Used by AKS node pools, Azure VMs (gpu_instance) and Azure reservations.
  azure {
    subscription_id = "00000000-0000-0000-0000-000000000000"
    tenant_id       = "11111111-1111-1111-1111-111111111111"
  }

  gcp {
    project = "my-ml-project"
  }

  # Cloud tags on every node pool's resources, for spend breakdown. (Kubernetes node
  # labels are each pool's `labels`.)
  default_labels = {
    team    = "ml"
    project = "llm"
  }

  # The plan of any pool whose cost at max_nodes is above this monthly figure fails.
  budget = {
    max_monthly_usd = 50000
  }
}
