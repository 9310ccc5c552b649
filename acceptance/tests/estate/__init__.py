"""What the provider reads of an estate: the inventory, `export`, `terraform query`, the
audit log and the `cost` CLI."""
