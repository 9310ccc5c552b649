//! The few Kubernetes API calls leader election needs: read, create and replace one
//! `coordination.k8s.io/v1` Lease, the in-cluster way (`KUBERNETES_SERVICE_HOST`/`_PORT`,
//! the service account's token and CA), each overridable for tests and out-of-cluster use.
//!
//! Why reqwest and not the `kube` crate: three REST calls on one object do not justify
//! kube's dependency tree (k8s-openapi's generated types for every API group, its own
//! HTTP/TLS stack beside the rustls reqwest the workspace already builds, a kubeconfig
//! loader we do not need); the Lease's JSON is small and stable (`coordination.k8s.io/v1`
//! since Kubernetes 1.14).
//!
//! The token file is read again on every request (projected service-account tokens
//! rotate) and never logged or put in an error. Every request has a timeout.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::lease::{LeaseRecord, format_micro_time, parse_micro_time};

/// The service account's files, mounted in every pod that automounts its token.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// A failed Lease call.
#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    /// The token file could not be read.
    #[error("reading the service account token {path}: {source}")]
    Token {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No answer: connection refused, DNS, TLS, timeout.
    #[error("the Kubernetes API did not answer: {0}")]
    Unreachable(String),
    /// The API answered an error (`Status` body: reason and message).
    #[error("the Kubernetes API answered {status} {reason}: {message}")]
    Api {
        /// HTTP status.
        status: u16,
        /// `Status.reason` (`Forbidden`, `Unauthorized`, ...).
        reason: String,
        /// `Status.message`.
        message: String,
    },
    /// Another replica wrote the Lease first (409: `Conflict` on a stale
    /// `resourceVersion`, `AlreadyExists` on create).
    #[error("another replica wrote the Lease first ({0})")]
    Conflict(String),
    /// The answer was not a Lease.
    #[error("the Kubernetes API answered something that is not a Lease: {0}")]
    BadBody(String),
}

/// Where and as whom to reach the API.
#[derive(Debug, Clone)]
pub struct KubeAccess {
    /// Base URL, e.g. `https://10.96.0.1:443` (no trailing slash).
    pub endpoint: String,
    /// The bearer token's file.
    pub token_file: PathBuf,
    /// A CA bundle (PEM) to trust instead of the system's roots, if any.
    pub ca_file: Option<PathBuf>,
}

/// A Lease read: its fields and the whole object (written back on replace, so fields we
/// do not know survive, `metadata.resourceVersion` included).
#[derive(Debug, Clone)]
pub struct ReadLease {
    /// The decision's view of it.
    pub record: LeaseRecord,
    /// The object as read.
    pub object: Value,
}

/// A client of one Lease.
#[derive(Debug, Clone)]
pub struct LeaseClient {
    http: reqwest::Client,
    access: KubeAccess,
    namespace: String,
    name: String,
}

impl LeaseClient {
    /// A client of Lease `namespace/name`; each call times out after `timeout`.
    pub fn new(
        access: KubeAccess,
        namespace: &str,
        name: &str,
        timeout: Duration,
    ) -> Result<LeaseClient, String> {
        let mut b = reqwest::Client::builder()
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .timeout(timeout);
        if let Some(path) = &access.ca_file {
            let pem = std::fs::read(path)
                .map_err(|e| format!("--kube-ca-file {}: {e}", path.display()))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| format!("--kube-ca-file {}: {e}", path.display()))?;
            b = b.tls_certs_only(certs);
        }
        let http = b
            .build()
            .map_err(|e| format!("the Kubernetes HTTP client: {e}"))?;
        Ok(LeaseClient {
            http,
            access,
            namespace: namespace.to_string(),
            name: name.to_string(),
        })
    }

    /// `namespace/name`, for messages.
    pub fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    fn collection_url(&self) -> String {
        format!(
            "{}/apis/coordination.k8s.io/v1/namespaces/{}/leases",
            self.access.endpoint.trim_end_matches('/'),
            self.namespace
        )
    }

    fn token(&self) -> Result<String, KubeError> {
        std::fs::read_to_string(&self.access.token_file)
            .map(|t| t.trim().to_string())
            .map_err(|source| KubeError::Token {
                path: self.access.token_file.clone(),
                source,
            })
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Result<(u16, Value), KubeError> {
        let resp = req
            .bearer_auth(self.token()?)
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(|e| KubeError::Unreachable(e.without_url().to_string()))?;
        let status = resp.status().as_u16();
        let body = resp
            .bytes()
            .await
            .map_err(|e| KubeError::Unreachable(e.without_url().to_string()))?;
        let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        Ok((status, value))
    }

    /// The Lease, `None` when it does not exist (404).
    pub async fn get(&self) -> Result<Option<ReadLease>, KubeError> {
        let url = format!("{}/{}", self.collection_url(), self.name);
        let (status, body) = self.send(self.http.get(url)).await?;
        match status {
            200 => read_lease(body).map(Some),
            404 => Ok(None),
            _ => Err(api_error(status, &body)),
        }
    }

    /// Creates the Lease with `record` (POST to the collection).
    pub async fn create(&self, record: &LeaseRecord) -> Result<ReadLease, KubeError> {
        let object = json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": spec_json(record),
        });
        let (status, body) = self
            .send(json_body(self.http.post(self.collection_url()), &object))
            .await?;
        match status {
            200 | 201 => read_lease(body),
            409 => Err(KubeError::Conflict(reason(&body))),
            _ => Err(api_error(status, &body)),
        }
    }

    /// Replaces the Lease read as `read` with `record` (PUT carrying the read
    /// `resourceVersion`: a 409 means someone wrote it since).
    pub async fn replace(
        &self,
        read: &ReadLease,
        record: &LeaseRecord,
    ) -> Result<ReadLease, KubeError> {
        let mut object = read.object.clone();
        let spec = object
            .as_object_mut()
            .ok_or_else(|| KubeError::BadBody("not an object".into()))?
            .entry("spec")
            .or_insert_with(|| json!({}));
        if let (Some(spec), Value::Object(new)) = (spec.as_object_mut(), spec_json(record)) {
            spec.extend(new);
        }
        let url = format!("{}/{}", self.collection_url(), self.name);
        let (status, body) = self.send(json_body(self.http.put(url), &object)).await?;
        match status {
            200 | 201 => read_lease(body),
            409 => Err(KubeError::Conflict(reason(&body))),
            _ => Err(api_error(status, &body)),
        }
    }
}

fn json_body(req: reqwest::RequestBuilder, object: &Value) -> reqwest::RequestBuilder {
    req.header("Content-Type", "application/json")
        .body(serde_json::to_vec(object).unwrap_or_default())
}

fn spec_json(r: &LeaseRecord) -> Value {
    json!({
        "holderIdentity": r.holder,
        "leaseDurationSeconds": r.duration_secs,
        "acquireTime": r.acquire_us.map(format_micro_time),
        "renewTime": r.renew_us.map(format_micro_time),
        "leaseTransitions": r.transitions,
    })
}

fn read_lease(object: Value) -> Result<ReadLease, KubeError> {
    if object.get("kind").and_then(Value::as_str) != Some("Lease") {
        return Err(KubeError::BadBody(format!(
            "kind {}",
            object.get("kind").unwrap_or(&Value::Null)
        )));
    }
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    let time = |k: &str| {
        spec.get(k)
            .and_then(Value::as_str)
            .and_then(parse_micro_time)
    };
    let record = LeaseRecord {
        holder: spec
            .get("holderIdentity")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        duration_secs: spec
            .get("leaseDurationSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0),
        acquire_us: time("acquireTime"),
        renew_us: time("renewTime"),
        transitions: spec
            .get("leaseTransitions")
            .and_then(Value::as_i64)
            .unwrap_or(0),
    };
    Ok(ReadLease { record, object })
}

fn reason(body: &Value) -> String {
    body.get("reason")
        .and_then(Value::as_str)
        .unwrap_or("Conflict")
        .to_string()
}

fn api_error(status: u16, body: &Value) -> KubeError {
    KubeError::Api {
        status,
        reason: body
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        message: body
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_reads_and_writes_back_in_the_api_shape() {
        let object = json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "gpu-watch", "namespace": "gpu", "resourceVersion": "4711"},
            "spec": {
                "holderIdentity": "gpu-watch-7d9f-abcde",
                "leaseDurationSeconds": 30,
                "acquireTime": "2025-12-05T02:00:00.000000Z",
                "renewTime": "2025-12-05T02:00:10.250000Z",
                "leaseTransitions": 3
            }
        });
        let read = read_lease(object.clone()).unwrap();
        assert_eq!(
            read.record,
            LeaseRecord {
                holder: "gpu-watch-7d9f-abcde".into(),
                duration_secs: 30,
                acquire_us: Some(1_764_900_000_000_000),
                renew_us: Some(1_764_900_010_250_000),
                transitions: 3,
            }
        );
        assert_eq!(spec_json(&read.record), object["spec"]);
        // A Lease created bare (kubectl) has no spec fields: free for anyone.
        let bare = read_lease(json!({"kind": "Lease", "metadata": {"name": "x"}})).unwrap();
        assert_eq!(bare.record, LeaseRecord::default());
        let status = json!({"kind": "Status", "reason": "NotFound", "code": 404});
        assert!(matches!(
            read_lease(status.clone()),
            Err(KubeError::BadBody(_))
        ));
        assert_eq!(
            api_error(403, &json!({"reason": "Forbidden", "message": "no"})).to_string(),
            "the Kubernetes API answered 403 Forbidden: no"
        );
    }
}
