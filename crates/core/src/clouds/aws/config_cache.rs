//! AWS SDK configurations kept for the life of the process: the credential chain is
//! resolved once per (region, profile), not on every apply and read.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aws_sdk_eks::config::{BehaviorVersion, Region};
use tokio::sync::OnceCell;

/// Which loaded configuration a client uses: the region and the named profile.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConfigKey {
    /// Region the clients call (`None`: the chain's own, from `AWS_REGION` or the profile).
    pub region: Option<String>,
    /// Named profile of the shared config files (`None`: the default chain).
    pub profile: Option<String>,
}

/// Loaded SDK configurations by [`ConfigKey`]; clones share one cache.
///
/// The SDK's credential providers cache and refresh credentials themselves, so one
/// loaded configuration serves every later client of the same key.
#[derive(Debug, Clone, Default)]
pub struct ConfigCache {
    slots: Arc<Mutex<HashMap<ConfigKey, Arc<OnceCell<aws_config::SdkConfig>>>>>,
}

impl ConfigCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The configuration for `key`, loading the usual chain on first use; concurrent first
    /// uses of one key load it once.
    pub async fn get(&self, key: &ConfigKey) -> aws_config::SdkConfig {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            slots.entry(key.clone()).or_default().clone()
        };
        slot.get_or_init(|| load(key)).await.clone()
    }

    /// How many configurations have been loaded (for tests and logs).
    pub fn loaded(&self) -> usize {
        let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.values().filter(|s| s.initialized()).count()
    }
}

/// Loads the usual chain (environment, profile, SSO, web identity, IMDS ...) for `key`.
async fn load(key: &ConfigKey) -> aws_config::SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    if let Some(r) = &key.region {
        loader = loader.region(Region::new(r.clone()));
    }
    if let Some(p) = &key.profile {
        loader = loader.profile_name(p);
    }
    loader.load().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_load_per_key_and_a_second_key_loads_again() {
        let cache = ConfigCache::new();
        let east = ConfigKey {
            region: Some("us-east-1".into()),
            profile: None,
        };
        let west = ConfigKey {
            region: Some("us-west-2".into()),
            ..east.clone()
        };
        let a = cache.get(&east).await;
        let b = cache.clone().get(&east).await;
        assert_eq!(cache.loaded(), 1);
        assert_eq!(a.region().map(|r| r.as_ref()), Some("us-east-1"));
        assert_eq!(b.region(), a.region());
        let c = cache.get(&west).await;
        assert_eq!(cache.loaded(), 2);
        assert_eq!(c.region().map(|r| r.as_ref()), Some("us-west-2"));
    }
}
