//! Helpers shared by this crate's unit tests.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Polls `f` to completion on the current thread with a waker that does nothing: for
/// futures that never wait on anything real (the fake cloud, the virtual clock).
pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// An EKS group `name` of `capacity` scaling `min..=max` on p5.48xlarge, labelled as pool
/// `train`'s.
pub(crate) fn eks_group(
    name: &str,
    capacity: crate::model::CapacityType,
    min: u32,
    max: u32,
) -> crate::model::GroupSpec {
    use crate::model::{AwsClass, GroupSpec, NodeClass, Scaling};
    GroupSpec {
        name: name.into(),
        capacity,
        machine_types: vec!["p5.48xlarge".into()],
        scaling: Scaling {
            min,
            max,
            desired: None,
        },
        labels: std::collections::BTreeMap::from([("gpu.tf/pool".into(), "train".into())]),
        taints: Vec::new(),
        tags: std::collections::BTreeMap::new(),
        class: NodeClass::Aws(AwsClass {
            node_role: "arn:aws:iam::123456789012:role/node".into(),
            subnets: Some(vec!["subnet-0a".into()]),
            ami_type: "AL2023_x86_64_NVIDIA".into(),
            capacity_reservation: None,
        }),
    }
}

/// Pool `train` on EKS: a one-node on-demand floor `train-od` and `train-spot` up to 3.
pub(crate) fn eks_pool() -> Vec<crate::model::GroupSpec> {
    use crate::model::CapacityType;
    vec![
        eks_group("train-od", CapacityType::OnDemand, 1, 1),
        eks_group("train-spot", CapacityType::Spot, 0, 3),
    ]
}
