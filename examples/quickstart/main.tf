# Quick start: runs offline, with no cloud credentials (`make demo` plans it).
# The cheapest 8x H100 spot offer across AWS, Azure and Google Cloud, from the price
# catalog built into the provider, with the price's source and date.

terraform {
  required_providers {
    gpu = {
      source = "gpu-tf/gpu"
    }
  }
}

provider "gpu" {
  default_labels = {
    team = "ml"
  }
}

data "gpu_spot_offer" "h100" {
  gpu       = "H100"
  gpu_count = 8
  clouds    = ["aws", "azure", "gcp"]
}

# The five cheapest on-demand alternatives, for comparison.
data "gpu_offers" "h100_on_demand" {
  gpu       = "H100"
  gpu_count = 8
  clouds    = ["aws", "azure", "gcp"]
  capacity  = "on_demand"
  limit     = 5
}

output "cheapest_h100_spot" {
  value = {
    where          = "${data.gpu_spot_offer.h100.cloud} ${data.gpu_spot_offer.h100.region} ${coalesce(data.gpu_spot_offer.h100.zone, "-")}"
    instance_type  = data.gpu_spot_offer.h100.instance_type
    usd_per_hour   = data.gpu_spot_offer.h100.price_per_hour
    usd_per_gpu_hr = data.gpu_spot_offer.h100.price_per_gpu_hour
    price_source   = data.gpu_spot_offer.h100.source
    price_as_of    = data.gpu_spot_offer.h100.as_of
  }
}

output "on_demand_alternatives" {
  value = [for o in data.gpu_offers.h100_on_demand.offers : format("%s %s %s: $%.4f/GPU-hour", o.cloud, o.region, o.instance_type, o.price_per_gpu_hour)]
}
