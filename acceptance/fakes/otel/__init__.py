"""A fake OpenTelemetry collector: an OTLP/HTTP logs receiver (`otlp_receiver.py`) that
keeps each log record the provider exports. See ../README.md for what it serves.
"""
