provider "gpu" {
  # Each cloud block is optional; credentials come from the cloud's usual chain
  # (environment, shared config files, workload identity), never from this file.
  aws {
    region  = "us-east-1"
    profile = "ml-prod"
    # endpoints = { ec2 = "http://127.0.0.1:5000", eks = "http://127.0.0.1:5000" }
  }

  azure {
    subscription_id = "00000000-0000-0000-0000-000000000000"
    tenant_id       = "11111111-1111-1111-1111-111111111111"
  }

  gcp {
    project = "my-ml-project"
  }

  # Labels put on every node pool the provider creates, on every cloud.
  default_labels = {
    team    = "ml"
    project = "llm"
  }

  # Plans whose GPU spend would go above this monthly figure are refused.
  budget = {
    max_monthly_usd = 50000
  }
}
