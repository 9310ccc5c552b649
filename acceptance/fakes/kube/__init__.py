"""A fake of the Kubernetes API's `coordination.k8s.io/v1` Leases (`kube_lease.py`), for
the leader election of `watch --lease-name`, with its own test beside it. See ../README.md
for what it serves.
"""
