"""The acceptance tests, one directory per area of the provider (see ../README.md)."""
