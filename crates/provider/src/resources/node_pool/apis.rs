//! Where a pool's node-group APIs come from: one per place (cloud and region), from the
//! provider's sessions, or a fake in tests. A pool with `failover` places needs the API of
//! each place it tries, reached only when its turn comes.

use std::ops::Deref;

use gpu_core::offer::Cloud;
use gpu_core::seam::NodeGroups;
use tfplugin::Diagnostics;

use super::Settings;

/// A node-group API, owned (a session's client) or borrowed (a test's fake).
pub enum Api<'a> {
    /// A client made for this call.
    Owned(Box<dyn NodeGroups>),
    /// One that lives elsewhere.
    #[cfg_attr(not(test), allow(dead_code))]
    Borrowed(&'a (dyn NodeGroups + 'a)),
}

impl<'a> Deref for Api<'a> {
    type Target = dyn NodeGroups + 'a;

    fn deref(&self) -> &Self::Target {
        match self {
            Api::Owned(b) => b.as_ref(),
            Api::Borrowed(r) => *r,
        }
    }
}

/// Gives the node-group API of a place; no call to the cloud is made here.
#[async_trait::async_trait]
pub trait Apis: Sync {
    /// The API of `cloud` in `region`.
    async fn at(&self, cloud: Cloud, region: &str) -> Result<Api<'_>, Diagnostics>;
}

/// The provider's sessions.
pub struct Sessions<'a>(pub &'a Settings);

#[async_trait::async_trait]
impl Apis for Sessions<'_> {
    async fn at(&self, cloud: Cloud, region: &str) -> Result<Api<'_>, Diagnostics> {
        self.0
            .clouds
            .node_groups(cloud, region)
            .await
            .map(Api::Owned)
    }
}

/// One fake for every place (the tests of a pool on one cloud).
#[cfg(test)]
#[async_trait::async_trait]
impl Apis for gpu_core::clouds::fake::FakeNodeGroups {
    async fn at(&self, _cloud: Cloud, _region: &str) -> Result<Api<'_>, Diagnostics> {
        Ok(Api::Borrowed(self))
    }
}

/// A fake per cloud (the tests of failover across clouds); a cloud without one cannot be
/// connected to, as a cloud without credentials.
#[cfg(test)]
pub struct ByCloud<'a>(pub Vec<(Cloud, &'a dyn NodeGroups)>);

#[cfg(test)]
#[async_trait::async_trait]
impl Apis for ByCloud<'_> {
    async fn at(&self, cloud: Cloud, _region: &str) -> Result<Api<'_>, Diagnostics> {
        match self.0.iter().find(|(c, _)| *c == cloud) {
            Some((_, api)) => Ok(Api::Borrowed(*api)),
            None => Err(tfplugin::Diagnostic::error(
                format!("Cannot connect to {cloud}"),
                format!("no {cloud} API in this test"),
            )
            .into()),
        }
    }
}
