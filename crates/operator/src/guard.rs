//! The start guard: an [`Instances`] that passes every call through, except that it
//! refuses to start a VM once this replica's lease has run out (the leader checks it
//! still holds an unexpired lease before each start, not only before each pass).

use std::collections::BTreeMap;

use async_trait::async_trait;
use gpu_core::instance::{ImageRef, Instances, LaunchSpec, LiveInstance};
use gpu_core::offer::Cloud;
use gpu_core::seam::CloudError;
use gpu_core::seam::instances::GpuMachine;

use crate::elector::LeaseHold;

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

    fn pace(&self) -> gpu_core::pace::Pace {
        self.inner.pace()
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

    async fn list_gpu(&self, gpu: &GpuMachine<'_>) -> Result<Vec<LiveInstance>, CloudError> {
        self.inner.list_gpu(gpu).await
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use gpu_core::instance::fake::FakeInstances;
    use gpu_core::instance::{InstanceClass, MARKER_LABEL, ReclaimPolicy};

    use super::*;

    fn spec() -> LaunchSpec {
        LaunchSpec {
            name: "train".into(),
            region: "us-central1".into(),
            zone: Some("us-central1-a".into()),
            machine_type: "a2-highgpu-1g".into(),
            spot: true,
            reclaim: ReclaimPolicy::Stop,
            image: "img".into(),
            disk_size_gb: 200,
            labels: BTreeMap::from([(MARKER_LABEL.to_string(), "train".to_string())]),
            user_data: None,
            class: InstanceClass::Gcp {
                project: "p".into(),
                network: None,
                subnetwork: None,
                service_account: None,
            },
        }
    }

    #[tokio::test]
    async fn a_start_goes_through_only_while_the_lease_holds() {
        let fake = std::sync::Arc::new(FakeInstances::new(Cloud::Gcp, false));
        let vm = fake.launch(&spec()).await.unwrap();
        fake.reclaim(&vm.id, 1000);
        struct Shared(std::sync::Arc<FakeInstances>);
        #[async_trait]
        impl Instances for Shared {
            fn cloud(&self) -> Cloud {
                self.0.cloud()
            }
            fn pace(&self) -> gpu_core::pace::Pace {
                self.0.pace()
            }
            async fn default_image(&self, r: &str) -> Result<ImageRef, CloudError> {
                self.0.default_image(r).await
            }
            async fn launch(&self, s: &LaunchSpec) -> Result<LiveInstance, CloudError> {
                self.0.launch(s).await
            }
            async fn get(&self, id: &str) -> Result<Option<LiveInstance>, CloudError> {
                self.0.get(id).await
            }
            async fn find(&self, s: &LaunchSpec) -> Result<Option<LiveInstance>, CloudError> {
                self.0.find(s).await
            }
            async fn list_managed(&self) -> Result<Vec<LiveInstance>, CloudError> {
                self.0.list_managed().await
            }
            async fn list_gpu(&self, g: &GpuMachine<'_>) -> Result<Vec<LiveInstance>, CloudError> {
                self.0.list_gpu(g).await
            }
            async fn start(&self, id: &str) -> Result<(), CloudError> {
                self.0.start(id).await
            }
            async fn set_labels(
                &self,
                id: &str,
                l: &BTreeMap<String, String>,
            ) -> Result<(), CloudError> {
                self.0.set_labels(id, l).await
            }
            async fn delete(&self, id: &str) -> Result<(), CloudError> {
                self.0.delete(id).await
            }
        }
        let hold = LeaseHold::default();
        let guarded = LeaseGuarded {
            inner: Box::new(Shared(fake.clone())),
            hold: hold.clone(),
        };
        // Never held, then run out: refused as a passing error, the cloud never asked.
        for until in [None, Some(Instant::now())] {
            hold.set(until);
            let err = guarded.start(&vm.id).await.unwrap_err();
            assert!(matches!(err, CloudError::Transient(_)), "{err}");
        }
        assert_eq!(fake.starts(), 0);
        assert_eq!(
            guarded.list_managed().await.unwrap().len(),
            1,
            "reads pass through"
        );
        hold.set(Some(Instant::now() + Duration::from_secs(30)));
        guarded.start(&vm.id).await.unwrap();
        assert_eq!(fake.starts(), 1);
    }
}
