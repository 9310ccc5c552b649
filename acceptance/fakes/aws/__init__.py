"""Fakes of the AWS APIs moto does not serve, each in front of a moto server that answers
everything else: EC2 Capacity Blocks and Capacity Reservations (`ec2_commitments.py`) and
EC2 spot and on-demand instances as `gpu_instance` launches them (`ec2_spot.py`), on what
both share (`common.py`: Query API requests, errors and values), with their own tests
beside them (`test_fake_*.py`). See ../README.md for what each serves.
"""
