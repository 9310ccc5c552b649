"""The provider as a plugin and a program: schema, handshake and mTLS, debug reattach,
tfplugin's example, diagnostics, bad input, secrets and the command line."""
