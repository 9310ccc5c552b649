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
/// region or zone, or for Spot): a stockout, which waiting may cure. (ARM's allocation
/// failure reference: https://learn.microsoft.com/troubleshoot/azure/virtual-machines/windows/allocation-failure.)
pub const CAPACITY_CODES: &[&str] = &[
    "AllocationFailed",
    "ZonalAllocationFailed",
    "OverconstrainedAllocationRequest",
    "OverconstrainedZonalAllocationRequest",
];

/// Error codes of a size the region or zone does not offer to this subscription
/// (https://aka.ms/azureskunotavailable): asking again there will not help.
pub const NOT_OFFERED_CODES: &[&str] = &["SkuNotAvailable"];

/// The first capacity or not-offered code among an error's `details` (ARM nests the cause
/// of a generic failure there, e.g. a `Conflict` or `DeploymentFailed` wrapping
/// `AllocationFailed`).
fn capacity_detail(body: &Value) -> Option<String> {
    let inner = body.get("error").filter(|e| e.is_object()).unwrap_or(body);
    inner
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| d.get("code").and_then(Value::as_str))
        .find(|c| CAPACITY_CODES.contains(c) || NOT_OFFERED_CODES.contains(c))
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
        let text = format!("{what}: {code}: {detail}: {m}");
        return if NOT_OFFERED_CODES.contains(&detail.as_str()) {
            CloudError::NotOffered(text)
        } else {
            CloudError::InsufficientCapacity(text)
        };
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
        c if NOT_OFFERED_CODES.contains(&c) => return CloudError::NotOffered(text),
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
        let nested_sku = json!({"error": {"code": "DeploymentFailed", "message": "failed",
            "details": [{"code": "SkuNotAvailable", "message": "no"}]}});
        assert!(matches!(
            from_arm("create VM", 409, &nested_sku),
            CloudError::NotOffered(m) if m.contains("SkuNotAvailable")
        ));
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

    /// ARM's capacity answers with their real bodies.
    #[test]
    fn arm_capacity_answers_are_classified() {
        use crate::seam::CapacityOutcome::{NotOffered, Quota, Stockout};
        let outcome = |status, body: Value| from_arm("PUT", status, &body).capacity_outcome();
        assert_eq!(
            outcome(
                409,
                json!({"error": {"code": "AllocationFailed", "message": "Allocation failed. We do not have sufficient capacity for the requested VM size in this region. Read more about improving likelihood of allocation success at http://aka.ms/allocation-guidance"}})
            ),
            Some(Stockout)
        );
        assert_eq!(
            outcome(
                409,
                json!({"error": {"code": "ZonalAllocationFailed", "message": "Allocation failed. We do not have sufficient capacity for the requested VM size in this zone. Read more about improving likelihood of allocation success at http://aka.ms/allocation-guidance"}})
            ),
            Some(Stockout)
        );
        assert_eq!(
            outcome(
                409,
                json!({"error": {"code": "OverconstrainedAllocationRequest", "message": "Allocation failed. VM(s) with the following constraints cannot be allocated, because the condition is too restrictive. Please remove some constraints and try again. Constraints applied are:\n  - Networking Constraints (such as Accelerated Networking or IPv6)\n  - VM Size\n"}})
            ),
            Some(Stockout)
        );
        assert_eq!(
            outcome(
                409,
                json!({"error": {"code": "SkuNotAvailable", "message": "The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: Standard_ND96asr_v4' is currently not available in location 'westus'. Please try another size or deploy to a different location or different zone. See https://aka.ms/azureskunotavailable for details."}})
            ),
            Some(NotOffered)
        );
        assert_eq!(
            outcome(
                409,
                json!({"error": {"code": "QuotaExceeded", "message": "Operation could not be completed as it results in exceeding approved Total Regional Cores quota. Additional details - Deployment Model: Resource Manager, Location: eastus, Current Limit: 10, Current Usage: 8, Additional Required: 96, (Minimum) New Limit Required: 104."}})
            ),
            Some(Quota)
        );
        assert_eq!(
            outcome(400, json!({"code": "InvalidParameter", "message": "bad"})),
            None
        );
    }
}
