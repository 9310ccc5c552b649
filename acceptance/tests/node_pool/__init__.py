"""`gpu_node_pool` on EKS (moto), AKS and GKE: lifecycle, many pools, rolls, failover,
faults, interrupts, spelling, moves between clouds and state upgrades."""
