# The GPU VMs this provider made, in every region of the catalog with GPUs that the
# filters keep; with `-generate-config-out` each becomes an import block and a
# `gpu_instance` resource. `user_data` and the cloud block are not read back from any
# cloud: write the ones the VM was made with before the first plan.
list "gpu_instance" "all" {
  provider = gpu
  config {
    clouds  = ["aws", "gcp"]
    regions = ["us-*"]
  }
}
