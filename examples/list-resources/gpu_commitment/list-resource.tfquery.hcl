# Every commitment in the regions asked (capacity blocks, capacity reservations, Compute
# Engine reservations and commitments, Azure reservations and capacity reservations),
# bought by this provider or not. The generated `gpu_commitment` resources import them;
# nothing is bought, and the provider block needs no `allow_commitment_purchase`.
list "gpu_commitment" "all" {
  provider = gpu
  config {
    regions = ["europe"]
  }
}
