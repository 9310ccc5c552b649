# An instance is imported by its own id (AWS with the region in front):
#   aws/<region>/<instance-id>
#   /subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<name>
#   projects/<project>/zones/<zone>/instances/<name>
# The read fills what the cloud reports; the first plan takes what no cloud reports back
# (gpu, user_data, SSH key, subnets, ...) from the configuration, without touching the VM.
terraform import gpu_instance.train aws/us-east-1/i-0123456789abcdef0
