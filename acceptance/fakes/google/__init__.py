"""Fakes of Google Cloud: the OAuth 2.0 token endpoint (`tokens.py`), the GKE Container API
v1 (`gke.py`), Compute Engine reservations and commitments (`compute.py`) and instances,
disks and images (`compute_instances.py`), and one base URL in front of GKE and Compute
Engine (`front.py`), on what every Google fake shares (`common.py`: errors, authentication,
operations). Their own tests sit beside them (`test_fake_*.py`). See ../README.md for what
each serves.
"""
