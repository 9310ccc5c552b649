//! ARM and AKS error bodies to typed [`CloudError`]s. ARM wraps errors as
//! `{"error": {"code", "message"}}`; the AKS resource provider has been seen to answer a
//! flat `{"code", "message"}` too: both are read.

use serde_json::Value;

use crate::seam::CloudError;

/// The (code, message) of an ARM error body, whichever shape it has.
pub fn code_and_message(body: &Value) -> (Option<String>, Option<String>) {
    let inner = body.get("error").filter(|e| e.is_object()).unwrap_or(body);
    let text = |k: &str| inner.get(k).and_then(Value::as_str).map(str::to_string);
    (text("code"), text("message"))
}

/// Error codes of an allocation Azure could not make (no capacity for the size, in the
/// region or zone, or for Spot): waiting may help.
pub const CAPACITY_CODES: &[&str] = &[
    "AllocationFailed",
    "ZonalAllocationFailed",
    "OverconstrainedAllocationRequest",
    "OverconstrainedZonalAllocationRequest",
    "SkuNotAvailable",
];

/// The first capacity code among an error's `details` (ARM nests the cause of a generic
/// failure there, e.g. a `Conflict` or `DeploymentFailed` wrapping `AllocationFailed`).
fn capacity_detail(body: &Value) -> Option<String> {
    let inner = body.get("error").filter(|e| e.is_object()).unwrap_or(body);
    inner
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| d.get("code").and_then(Value::as_str))
        .find(|c| CAPACITY_CODES.contains(c))
        .map(str::to_string)
}

/// Whether an ARM refusal says another operation is still running on the resource.
fn busy_message(message: Option<&str>) -> bool {
    let m = message.unwrap_or("").to_ascii_lowercase();
    m.contains("in progress") || m.contains("aks-pending-operation")
}

/// Whether an ARM refusal says a quota would be exceeded.
fn quota_message(message: Option<&str>) -> bool {
    message.unwrap_or("").to_ascii_lowercase().contains("quota")
}

/// The typed error of an ARM answer with HTTP `status` and `body`, for `what` (the call).
pub fn from_arm(what: &str, status: u16, body: &Value) -> CloudError {
    let (code, message) = code_and_message(body);
    let code = code.unwrap_or_default();
    if let Some(detail) = capacity_detail(body) {
        let m = message.as_deref().map(str::trim).unwrap_or("");
        return CloudError::InsufficientCapacity(format!("{what}: {code}: {detail}: {m}"));
    }
    let text = match (code.is_empty(), message.as_deref().map(str::trim)) {
        (false, Some(m)) if !m.is_empty() => format!("{what}: {code}: {m}"),
        (false, _) => format!("{what}: {code}"),
        (true, Some(m)) if !m.is_empty() => format!("{what}: HTTP {status}: {m}"),
        _ => format!("{what}: HTTP {status}"),
    };
    match code.as_str() {
        "ResourceNotFound" | "NotFound" | "ResourceGroupNotFound" | "ParentResourceNotFound" => {
            return CloudError::NotFound(text);
        }
        // ARM's word for many refusals; the message tells which: another operation on
        // the cluster or VM in progress (AKS: "Another operation (Updating) is in
        // progress, please wait for it to finish before starting a new operation. See
        // https://aka.ms/aks-pending-operation"), a cores quota ("Operation could not be
        // completed as it results in exceeding approved ... quota"), or a state conflict.
        "OperationNotAllowed" | "Conflict" if busy_message(message.as_deref()) => {
            return CloudError::Busy(text);
        }
        "OperationNotAllowed" if quota_message(message.as_deref()) => {
            return CloudError::Quota(text);
        }
        "OperationNotAllowed" | "Conflict" | "PreconditionFailed" | "EtagMismatch" => {
            return CloudError::Conflict(text);
        }
        "QuotaExceeded" | "OperationNotAllowedQuota" | "InsufficientVCPUQuota" => {
            return CloudError::Quota(text);
        }
        c if CAPACITY_CODES.contains(&c) => return CloudError::InsufficientCapacity(text),
        "AuthorizationFailed"
        | "InvalidAuthenticationToken"
        | "InvalidAuthenticationTokenTenant"
        | "ExpiredAuthenticationToken"
        | "AuthenticationFailed" => return CloudError::Unauthorized(text),
        _ => {}
    }
    match status {
        404 => CloudError::NotFound(text),
        409 | 412 => CloudError::Conflict(text),
        429 => CloudError::Throttled(text),
        401 | 403 => CloudError::Unauthorized(text),
        400 | 405 | 415 | 422 => CloudError::Invalid(text),
        500..=599 => CloudError::Transient(text),
        _ => CloudError::Other(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_shapes_and_the_codes_map() {
        let wrapped = json!({"error": {"code": "OperationNotAllowed", "message": "not now"}});
        let flat = json!({"code": "OperationNotAllowed", "message": "not now", "subcode": ""});
        for body in [wrapped, flat] {
            let e = from_arm("PUT agentPools/gs1", 409, &body);
            assert_eq!(
                e,
                CloudError::Conflict("PUT agentPools/gs1: OperationNotAllowed: not now".into())
            );
        }
        // AKS's one operation per cluster (the message of aka.ms/aks-pending-operation).
        let aks = json!({"code": "OperationNotAllowed", "message": "Operation is not allowed: Another operation (Updating) is in progress, please wait for it to finish before starting a new operation. See https://aka.ms/aks-pending-operation for more details", "subcode": ""});
        assert!(
            matches!(from_arm("PUT agentPools/gs1", 409, &aks), CloudError::Busy(m) if m.contains("Another operation (Updating)"))
        );
        // A VM action while another runs on the VM.
        let vm = json!({"error": {"code": "OperationNotAllowed", "message": "Operation 'start' is not allowed on VM 'gpu-1' while operation 'deallocate' is in progress."}});
        assert!(matches!(
            from_arm("start VM", 409, &vm),
            CloudError::Busy(_)
        ));
        // The regional cores quota, which ARM also calls OperationNotAllowed.
        let quota = json!({"error": {"code": "OperationNotAllowed", "message": "Operation could not be completed as it results in exceeding approved standardNCADSA100v4Family Cores quota. Additional details - Deployment Model: Resource Manager, Location: eastus, Current Limit: 0, Current Usage: 0, Additional Required: 24, (Minimum) New Limit Required: 24."}});
        assert!(matches!(
            from_arm("PUT agentPools/gs1", 409, &quota),
            CloudError::Quota(_)
        ));
        let nf = from_arm("GET", 404, &json!({"error": {"code": "ResourceNotFound"}}));
        assert!(matches!(nf, CloudError::NotFound(_)));
        assert!(matches!(
            from_arm(
                "PUT",
                400,
                &json!({"error": {"code": "QuotaExceeded", "message": "x"}})
            ),
            CloudError::Quota(_)
        ));
        assert!(matches!(
            from_arm(
                "PUT",
                400,
                &json!({"code": "InvalidParameter", "message": "x"})
            ),
            CloudError::Invalid(_)
        ));
        for code in CAPACITY_CODES {
            assert!(matches!(
                from_arm("start VM", 400, &json!({"code": code, "message": "no room"})),
                CloudError::InsufficientCapacity(m) if m == format!("start VM: {code}: no room")
            ));
        }
        let nested = json!({"error": {"code": "Conflict", "message": "failed",
            "details": [{"code": "ZonalAllocationFailed", "message": "zone full"}]}});
        assert!(matches!(
            from_arm("create VM", 409, &nested),
            CloudError::InsufficientCapacity(m) if m.contains("ZonalAllocationFailed")
        ));
        assert!(matches!(
            from_arm("GET", 429, &Value::Null),
            CloudError::Throttled(_)
        ));
        assert!(matches!(
            from_arm("GET", 503, &Value::Null),
            CloudError::Transient(_)
        ));
        assert!(matches!(
            from_arm(
                "GET",
                401,
                &json!({"error": {"code": "InvalidAuthenticationToken"}})
            ),
            CloudError::Unauthorized(_)
        ));
    }
}
