"""Fakes of Azure: Microsoft Entra ID's token endpoint (`tokens.py`), and Azure Resource
Manager serving AKS agent pools (`aks.py`), capacity commitments (`commitments.py`) and
single VMs (`vms.py`), on what every ARM fake shares (`common.py`); `run_azure.py` runs
the token and AKS fakes for tests outside pytest. Their own tests sit beside them
(`test_fake_*.py`). See ../README.md for what each serves.
"""
