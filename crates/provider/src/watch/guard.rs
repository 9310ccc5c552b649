//! The start guard: an [`Instances`] that passes every call through, except that it
//! refuses to start a VM once this replica's lease has run out (the leader checks it
//! still holds an unexpired lease before each start, not only before each pass).

use std::collections::BTreeMap;

use async_trait::async_trait;
use gpu_core::cloud::CloudError;
use gpu_core::instance::{ImageRef, Instances, LaunchSpec, LiveInstance};
use gpu_core::offer::Cloud;

use super::elector::LeaseHold;

/// `inner`, whose `start` asks `hold` first.
pub struct LeaseGuarded {
    /// The cloud's adapter.
    pub inner: Box<dyn Instances>,
    /// This replica's hold on the lease.
    pub hold: LeaseHold,
}

#[async_trait]
impl Instances for LeaseGuarded {
    fn cloud(&self) -> Cloud {
        self.inner.cloud()
    }

    async fn default_image(&self, region: &str) -> Result<ImageRef, CloudError> {
        self.inner.default_image(region).await
    }

    async fn launch(&self, spec: &LaunchSpec) -> Result<LiveInstance, CloudError> {
        self.inner.launch(spec).await
    }

    async fn get(&self, id: &str) -> Result<Option<LiveInstance>, CloudError> {
        self.inner.get(id).await
    }

    async fn find(&self, spec: &LaunchSpec) -> Result<Option<LiveInstance>, CloudError> {
        self.inner.find(spec).await
    }

    async fn list_managed(&self) -> Result<Vec<LiveInstance>, CloudError> {
        self.inner.list_managed().await
    }

    /// Refused (as a passing error, so the watcher tries again later) when the lease ran
    /// out since the pass began.
    async fn start(&self, id: &str) -> Result<(), CloudError> {
        if !self.hold.holds() {
            return Err(CloudError::Transient(
                "not started: this replica's lease ran out; the leader will start it".into(),
            ));
        }
        self.inner.start(id).await
    }

    async fn set_labels(
        &self,
        id: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), CloudError> {
        self.inner.set_labels(id, labels).await
    }

    async fn delete(&self, id: &str) -> Result<(), CloudError> {
        self.inner.delete(id).await
    }
}
