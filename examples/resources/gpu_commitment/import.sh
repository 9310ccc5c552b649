# A commitment is imported by its kind, where the cloud keeps it, and its id there:
#   aws_capacity_block/<region>/<cr-id>          aws_capacity_reservation/<region>/<cr-id>
#   gcp_reservation/<zone>/<name>                gcp_commitment/<region>/<name>
#   azure_reservation/<region>/<reservation order id>
#   azure_capacity_reservation/<region>/<resource group>/<group>/<name>
# Import reads it and never buys, changes or cancels anything. Write the configuration
# with `instance_type` (not `gpu`) and without a capacity block's start window: the
# cloud keeps what was bought, not how it was chosen. Compute Engine and Azure
# reservations have no tags the provider can read unless it bought them.
terraform import gpu_commitment.floor aws_capacity_reservation/us-east-1/cr-0123456789abcdef0
