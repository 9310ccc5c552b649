"""An OpenTelemetry collector's OTLP/HTTP logs receiver (`POST /v1/logs`, protobuf), as
the OTLP specification defines it: the body is an `ExportLogsServiceRequest`, decoded
with the OpenTelemetry protobuf definitions (the `opentelemetry-proto` package), and the
answer an empty `ExportLogsServiceResponse`. Each log record is kept with its resource
attributes, scope name, timestamps, severity, body and attributes as plain Python values,
with the request headers (for the tests of `audit.headers`). A fault (`/_fake/faults`)
makes the receiver refuse, as a collector that is down or overloaded would.
"""

from __future__ import annotations

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest, ExportLogsServiceResponse)

from .. import FakeServer, Request, Response

PROTOBUF = "application/x-protobuf"


def any_value(v) -> object:
    """An OTLP `AnyValue` as a Python value."""
    kind = v.WhichOneof("value")
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in v.kvlist_value.values}
    if kind == "array_value":
        return [any_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


class OtlpReceiver(FakeServer):
    """Keeps every log record it receives (`records`) and the headers of each export."""

    name = "otlp-receiver"

    def __init__(self, time_scale=None):
        super().__init__(time_scale)
        self.records: list[dict] = []
        self.exports: list[dict] = []

    def reset_state(self) -> None:
        self.records.clear()
        self.exports.clear()

    def snapshot(self) -> dict:
        return {"records": self.records, "exports": self.exports}

    def error(self, status, code, message, retry_after=None) -> Response:
        return Response(status, (message or "").encode(), {"Content-Type": "text/plain"})

    def handle(self, request: Request) -> Response:
        if request.method != "POST" or request.path != "/v1/logs":
            return Response(404, b"")
        if (request.headers.get("Content-Type") or "").split(";")[0] != PROTOBUF:
            return Response(415, b"OTLP/HTTP protobuf expected")
        export = ExportLogsServiceRequest.FromString(request.body)
        with self.lock:
            self.exports.append({k.lower(): v for k, v in request.headers.items()})
            for rl in export.resource_logs:
                resource = {kv.key: any_value(kv.value) for kv in rl.resource.attributes}
                for sl in rl.scope_logs:
                    for r in sl.log_records:
                        self.records.append({
                            "resource": resource,
                            "scope": sl.scope.name,
                            "time_unix_nano": r.time_unix_nano,
                            "observed_time_unix_nano": r.observed_time_unix_nano,
                            "severity_number": r.severity_number,
                            "severity_text": r.severity_text,
                            "event_name": r.event_name,
                            "body": any_value(r.body),
                            "attributes": {kv.key: any_value(kv.value) for kv in r.attributes},
                        })
        return Response(200, ExportLogsServiceResponse().SerializeToString(),
                        {"Content-Type": PROTOBUF})
