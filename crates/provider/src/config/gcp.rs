//! The provider block's `gcp {}` face: its schema and checks, its settings, and the Google
//! Cloud session settings they become.

use gpu_core::clouds::gcp::GcpSettings;
use gpu_core::clouds::gcp::auth::AccessToken;
use serde::Deserialize;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::validators::Validator;
use tfplugin::{Diagnostic, Type};

use crate::checks;

/// The `gcp` block's schema.
pub fn block() -> NestedBlock {
    NestedBlock::single(
        "gcp",
        Block::new("Settings for Google Cloud, used by node pools on GKE, Compute Engine VMs (`gpu_instance`) and Google Cloud commitments. Credentials come from `access_token` when set, else the `GOOGLE_OAUTH_ACCESS_TOKEN` environment variable, else Application Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS` key file, gcloud user credentials, the metadata server).")
            .attribute(Attribute::optional("project", Type::String).describe("Google Cloud project: the default for VMs and commitments; when set, a pool whose `cluster` is in another project fails at plan."))
            .attribute(Attribute::optional("endpoint", Type::String).describe("Endpoint override for the Google Cloud APIs, for emulators and private endpoints.").validate(checks::http_url()))
            .attribute(Attribute::optional("access_token", Type::String).sensitive().describe("An OAuth 2.0 access token to call Google Cloud with, as is (it is not refreshed); default the `GOOGLE_OAUTH_ACCESS_TOKEN` environment variable, then Application Default Credentials. Sensitive: never shown in plans, logs or errors.").validate(token_not_empty())),
    )
}

/// A token that is not blank; the token itself is never quoted, only that it is empty.
fn token_not_empty() -> Validator {
    Validator::diagnosing(|path, v| {
        if v.as_str().is_some_and(|t| t.trim().is_empty()) {
            vec![Diagnostic::error(
                "Empty gcp.access_token",
                "`gcp.access_token` is empty; give an OAuth access token, or leave it unset to use `GOOGLE_OAUTH_ACCESS_TOKEN` or Application Default Credentials.",
            )
            .at(path.clone())]
        } else {
            Vec::new()
        }
    })
    .describe("Must not be empty.")
}

/// The `gcp` block.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct GcpConfig {
    /// Project id.
    pub project: Option<String>,
    /// API endpoint override.
    pub endpoint: Option<String>,
    /// An OAuth access token to use as is (printed as `***`; read by the GKE connection,
    /// which comes with the GKE node pools).
    pub access_token: Option<AccessToken>,
}

impl GcpConfig {
    /// The Google Cloud session settings of this block.
    pub fn settings(&self) -> GcpSettings {
        GcpSettings {
            project: self.project.clone(),
            endpoint: self.endpoint.clone(),
            access_token: self.access_token.clone(),
            ..Default::default()
        }
    }
}
