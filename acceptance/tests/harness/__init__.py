"""The harness itself, the examples a user copies, and installing the provider."""
