//! Whose turn it is to change a cluster. AKS and GKE run one node-group operation per
//! cluster at a time; Terraform applies resources in parallel. [`ClusterTurns`] queues this
//! process's changes to one cluster behind each other (first come, first served), from the
//! mutating request until the operation it started has finished; changes to different
//! clusters, and reads, never wait. Another process's operations cannot be seen here: the
//! cloud's "busy" answer ([`super::CloudError::Busy`]) is waited out by `pool::reconcile`.

use std::time::Duration;

#[cfg(feature = "live")]
pub use queues::ClusterTurns;

/// The right to change a cluster, held until dropped, and how long it took to get.
#[derive(Default)]
pub struct Turn {
    /// Time spent queued behind this process's other changes to the cluster.
    pub waited: Duration,
    held: Option<Box<dyn Send + Sync>>,
}

impl std::fmt::Debug for Turn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn")
            .field("waited", &self.waited)
            .field("held", &self.is_held())
            .finish()
    }
}

impl Turn {
    /// A turn that needed no queue (clouds that run operations in parallel).
    pub fn free() -> Self {
        Turn::default()
    }

    /// Whether this turn holds a cluster's queue (false for [`Turn::free`]).
    pub fn is_held(&self) -> bool {
        self.held.is_some()
    }
}

#[cfg(feature = "live")]
mod queues {
    use std::collections::HashMap;
    use std::sync::{Arc, LazyLock, Mutex};

    use super::Turn;
    use crate::cancel::Cancel;
    use crate::seam::poll::Clock;
    use crate::seam::{CloudError, ClusterRef};

    /// One process's turns, one queue per cluster; clones share the queues.
    #[derive(Debug, Clone, Default)]
    pub struct ClusterTurns(Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>);

    /// The turns every adapter of this process shares (a provider process serves all of one
    /// configuration's resources).
    static PROCESS: LazyLock<ClusterTurns> = LazyLock::new(ClusterTurns::default);

    impl ClusterTurns {
        /// The queues shared by the whole process.
        pub fn process() -> Self {
            PROCESS.clone()
        }

        /// Waits for the turn at `cluster` (queues are first come, first served), the wait
        /// measured on `clock`; ends early with [`CloudError::Cancelled`] when `cancel` is
        /// set, leaving the queue.
        pub async fn take(
            &self,
            cluster: &ClusterRef,
            clock: &impl Clock,
            cancel: &Cancel,
        ) -> Result<Turn, CloudError> {
            let queue = {
                let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
                // ARM ids are case-insensitive; GKE's are lowercase anyway.
                let key = format!("{}:{}", cluster.cloud(), cluster.id().to_ascii_lowercase());
                all.entry(key).or_default().clone()
            };
            let asked = clock.now();
            match cancel.run(queue.lock_owned()).await {
                Ok(guard) => Ok(Turn {
                    waited: clock.now().saturating_sub(asked),
                    held: Some(Box::new(guard)),
                }),
                Err(_) => Err(CloudError::Cancelled(format!(
                    "Terraform asked the provider to stop while this change waited for its turn at cluster {cluster}"
                ))),
            }
        }
    }
}

#[cfg(all(test, feature = "live"))]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::*;
    use crate::cancel::Cancel;
    use crate::pace::Pace;
    use crate::seam::{CloudError, ClusterRef};

    fn gke(name: &str) -> ClusterRef {
        ClusterRef::parse(
            crate::offer::Cloud::Gcp,
            "us-central1",
            &format!("projects/p/locations/us-central1/clusters/{name}"),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn one_cluster_one_turn_at_a_time_first_come_first_served() {
        let turns = ClusterTurns::default();
        let cancel = Cancel::new();
        let first = turns.take(&gke("a"), &Pace::real(), &cancel).await.unwrap();
        assert!(first.is_held());
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiting = Vec::new();
        for i in 0..3 {
            let (turns, cancel, order) = (turns.clone(), cancel.clone(), order.clone());
            waiting.push(tokio::spawn(async move {
                let t = turns.take(&gke("a"), &Pace::real(), &cancel).await.unwrap();
                order.lock().unwrap().push(i);
                tokio::time::sleep(Duration::from_millis(5)).await;
                drop(t);
            }));
            // Queue them in a known order.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            order.lock().unwrap().is_empty(),
            "nobody passes a held turn"
        );
        // Another cluster is not held up.
        let other = turns.take(&gke("b"), &Pace::real(), &cancel).await.unwrap();
        assert!(other.waited < Duration::from_millis(50));
        drop(first);
        for w in waiting {
            w.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2]);
    }

    #[tokio::test]
    async fn a_stop_ends_the_wait_for_a_turn() {
        let turns = ClusterTurns::default();
        let held = turns
            .take(&gke("a"), &Pace::real(), &Cancel::new())
            .await
            .unwrap();
        let cancel = Cancel::new();
        let (t2, c2) = (turns.clone(), cancel.clone());
        let waiter =
            tokio::spawn(async move { t2.take(&gke("a"), &Pace::real(), &c2).await.map(|_| ()) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.cancel();
        let got = waiter.await.unwrap();
        assert!(matches!(got, Err(CloudError::Cancelled(_))), "{got:?}");
        drop(held);
        // The queue is free again: the cancelled waiter left it.
        let again = turns
            .take(&gke("a"), &Pace::real(), &Cancel::new())
            .await
            .unwrap();
        assert!(again.is_held());
    }
}
