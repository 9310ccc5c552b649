//! Naming a caller from what its credentials say: an Entra access token's claims, a
//! Google credentials file. Pure functions over JSON; the clouds' sessions fetch it.

use serde_json::Value;

/// The actor an Entra access token's claims name: the object id (`oid`) and, where the
/// token has one, a name (`name`, `upn`, `unique_name` or `app_displayname`), as
/// `"<oid> (<name>)"`; `None` without an `oid`.
pub fn entra_actor(claims: &Value) -> Option<String> {
    let oid = claims.get("oid")?.as_str().filter(|s| !s.is_empty())?;
    let name = ["name", "upn", "unique_name", "app_displayname"]
        .iter()
        .find_map(|k| claims.get(*k).and_then(Value::as_str))
        .filter(|s| !s.is_empty());
    Some(match name {
        Some(n) => format!("{oid} ({n})"),
        None => oid.to_string(),
    })
}

/// The service account a Google credentials file names: a key file's `client_email`, or
/// the account an impersonation URL names (`…/serviceAccounts/<e-mail>:generateAccessToken`);
/// `None` for user credentials (ask Google's tokeninfo instead).
pub fn google_account(credentials: &Value) -> Option<String> {
    if let Some(email) = credentials.get("client_email").and_then(Value::as_str) {
        return Some(email.to_string());
    }
    let url = credentials
        .get("service_account_impersonation_url")
        .and_then(Value::as_str)?;
    let tail = url.rsplit("/serviceAccounts/").next()?;
    let email = tail.split(':').next()?;
    email.contains('@').then(|| email.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_entra_token_names_its_object_and_its_name_where_it_has_one() {
        let app = json!({"oid": "7c1c…", "appid": "a", "idtyp": "app"});
        assert_eq!(entra_actor(&app).as_deref(), Some("7c1c…"));
        let user = json!({"oid": "u-1", "name": "Ada Lovelace", "upn": "ada@x"});
        assert_eq!(entra_actor(&user).as_deref(), Some("u-1 (Ada Lovelace)"));
        let named_app = json!({"oid": "s-1", "app_displayname": "ci-deployer"});
        assert_eq!(
            entra_actor(&named_app).as_deref(),
            Some("s-1 (ci-deployer)")
        );
        assert_eq!(entra_actor(&json!({"sub": "x"})), None);
    }

    #[test]
    fn google_credentials_name_a_service_account_or_leave_it_to_tokeninfo() {
        let key =
            json!({"type": "service_account", "client_email": "ci@p.iam.gserviceaccount.com"});
        assert_eq!(
            google_account(&key).as_deref(),
            Some("ci@p.iam.gserviceaccount.com")
        );
        let imp = json!({"type": "impersonated_service_account",
            "service_account_impersonation_url": "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/deploy@p.iam.gserviceaccount.com:generateAccessToken"});
        assert_eq!(
            google_account(&imp).as_deref(),
            Some("deploy@p.iam.gserviceaccount.com")
        );
        assert_eq!(
            google_account(&json!({"type": "authorized_user", "client_id": "x"})),
            None
        );
    }
}
