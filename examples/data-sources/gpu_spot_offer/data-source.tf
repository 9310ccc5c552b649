# The cheapest spot offer of 8x H100 in US regions of AWS, Azure or Google Cloud.
data "gpu_spot_offer" "h100" {
  gpu       = "H100"
  gpu_count = 8
  clouds    = ["aws", "azure", "gcp"]
  regions   = ["us-*", "eastus*", "westus*"]
}

# Hysteresis: keep the current choice unless another offer is at least 15% cheaper
# per GPU-hour, so a pool fed by this data source does not move on every price change.
data "gpu_spot_offer" "sticky" {
  gpu                = "A100-80GB"
  min_gpu_count      = 1
  capacity           = "either"
  prefer {
    cloud         = "gcp"
    region        = "us-central1"
    instance_type = "a2-ultragpu-1g"
    spot          = true
  }
  min_saving_percent = 15
}

output "h100" {
  value = format("%s/%s: %s at $%.2f/h (%s, %s)", data.gpu_spot_offer.h100.cloud, data.gpu_spot_offer.h100.region, data.gpu_spot_offer.h100.instance_type, data.gpu_spot_offer.h100.price_per_hour, data.gpu_spot_offer.h100.source, coalesce(data.gpu_spot_offer.h100.as_of, "undated"))
}

output "sticky" {
  value = "${data.gpu_spot_offer.sticky.cloud} ${data.gpu_spot_offer.sticky.instance_type}"
}
