//! Where the bearer token of every GKE call comes from: an explicit OAuth access token
//! (the provider's `gcp.access_token`, else `GOOGLE_OAUTH_ACCESS_TOKEN`, as Google's own
//! Terraform provider reads it), or Application Default Credentials through
//! google-cloud-auth (`GOOGLE_APPLICATION_CREDENTIALS` key file, gcloud user credentials,
//! the metadata server). Tokens are [`AccessToken`]s: their `Debug` is `***` and they have
//! no `Display`, so they reach no log or error text.

use std::fmt;

use google_cloud_auth::credentials::{AccessTokenCredentials, Builder};

use crate::seam::CloudError;

/// The environment variable Google's Terraform provider reads an access token from.
pub const ACCESS_TOKEN_ENV: &str = "GOOGLE_OAUTH_ACCESS_TOKEN";

/// The OAuth scope GKE calls need (also what google-cloud-auth defaults to).
pub const CLOUD_PLATFORM: &str = "https://www.googleapis.com/auth/cloud-platform";

/// A bearer token (or any secret): printed as `***`, readable only through
/// [`AccessToken::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken(String);

impl AccessToken {
    /// Wraps `token` (surrounding whitespace dropped).
    pub fn new(token: impl Into<String>) -> Self {
        AccessToken(token.into().trim().to_string())
    }

    /// The token itself, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Read from a string setting through [`AccessToken::new`].
impl<'de> serde::Deserialize<'de> for AccessToken {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(AccessToken::new)
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A source of bearer tokens for GKE calls.
#[derive(Clone)]
pub enum TokenSource {
    /// One fixed token (from the options or `GOOGLE_OAUTH_ACCESS_TOKEN`); never refreshed.
    Static(AccessToken),
    /// Application Default Credentials (google-cloud-auth caches and refreshes the token).
    Adc(AccessTokenCredentials),
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenSource::Static(_) => f.write_str("TokenSource::Static(***)"),
            TokenSource::Adc(_) => f.write_str("TokenSource::Adc"),
        }
    }
}

impl TokenSource {
    /// `explicit` when given and not empty, else `GOOGLE_OAUTH_ACCESS_TOKEN` when set and
    /// not empty, else Application Default Credentials with the cloud-platform scope
    /// (building them reads the key file or gcloud's file, or falls back on the metadata
    /// server; no request is made yet).
    pub fn resolve(explicit: Option<&AccessToken>) -> Result<Self, CloudError> {
        let env = std::env::var(ACCESS_TOKEN_ENV).ok().map(AccessToken::new);
        Self::choose(explicit, env.as_ref())
    }

    fn choose(
        explicit: Option<&AccessToken>,
        env: Option<&AccessToken>,
    ) -> Result<Self, CloudError> {
        let given = |t: &&AccessToken| !t.0.is_empty();
        if let Some(t) = explicit.filter(given).or(env.filter(given)) {
            return Ok(TokenSource::Static(t.clone()));
        }
        Builder::default()
            .with_scopes([CLOUD_PLATFORM])
            .build_access_token_credentials()
            .map(TokenSource::Adc)
            .map_err(|e| {
                CloudError::Unauthorized(format!(
                    "Google application default credentials: {e} (set \
                     GOOGLE_APPLICATION_CREDENTIALS to a key file, run `gcloud auth \
                     application-default login`, or give an access token)"
                ))
            })
    }

    /// The current token (ADC: cached, refreshed by google-cloud-auth when it expires).
    pub async fn token(&self) -> Result<AccessToken, CloudError> {
        match self {
            TokenSource::Static(t) => Ok(t.clone()),
            TokenSource::Adc(c) => c
                .access_token()
                .await
                .map(|t| AccessToken(t.token))
                .map_err(|e| {
                    let text = format!("getting a Google access token: {e}");
                    if e.is_transient() {
                        CloudError::Transient(text)
                    } else {
                        CloudError::Unauthorized(text)
                    }
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_never_print() {
        let t = AccessToken::new(" ya29.secret-value ");
        assert_eq!(t.expose(), "ya29.secret-value");
        assert_eq!(format!("{t:?}"), "***");
        let s = TokenSource::choose(Some(&t), None).unwrap();
        let shown = format!("{s:?}");
        assert!(!shown.contains("secret"), "{shown}");
    }

    #[test]
    fn explicit_token_wins_over_the_environment_and_empty_ones_do_not_count() {
        let a = AccessToken::new("from-options");
        let b = AccessToken::new("from-env");
        let got = |e: Option<&AccessToken>, v: Option<&AccessToken>| match TokenSource::choose(e, v)
            .unwrap()
        {
            TokenSource::Static(t) => t.expose().to_string(),
            TokenSource::Adc(_) => "adc".into(),
        };
        assert_eq!(got(Some(&a), Some(&b)), "from-options");
        assert_eq!(got(None, Some(&b)), "from-env");
        assert_eq!(got(Some(&AccessToken::new("  ")), Some(&b)), "from-env");
    }
}
