//! The places a VM may run, in the order written: its own `cloud`, `region` and `zone`,
//! then each `failover` block (`cloud`, `region`, optional `zone` and `instance_type`);
//! where it runs now (the computed `placement`); and the VM's object at one place (its
//! cloud, region, zone and instance type replaced), so the code that plans, applies and
//! reads one place serves every place.

use gpu_core::offer::Cloud;
use gpu_core::pool::spelling;
use tfplugin::{AttributePath, Diagnostics, Tf, Type, Value};

use super::model::{FailoverModel, InstanceModel};
use super::plan::set;
use crate::model_values::{opt, text};

/// The attributes a place replaces; the state keeps the user's words where they wrote
/// them (a known value in the plan), the place's where the provider filled them.
const PLACE_ATTRIBUTES: [&str; 5] = ["cloud", "region", "zone", "instance_type", "image"];

/// One place a VM may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmPlace {
    /// The cloud.
    pub cloud: Cloud,
    /// The region as the cloud spells it.
    pub region: String,
    /// The zone, when the place names one.
    pub zone: Option<String>,
    /// The instance type, when the place names one.
    pub instance_type: Option<String>,
}

impl VmPlace {
    /// `gcp us-central1 us-central1-b`: how messages name the place.
    pub fn label(&self) -> String {
        match &self.zone {
            Some(z) => format!("{} {} {z}", self.cloud, self.region),
            None => format!("{} {}", self.cloud, self.region),
        }
    }

    /// Whether `other` is this place: the same cloud and region, and the same zone where
    /// both name one.
    pub fn same(&self, other: &VmPlace) -> bool {
        self.cloud == other.cloud
            && self.region == other.region
            && match (&self.zone, &other.zone) {
                (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
                _ => true,
            }
    }

    /// The value of `placement` here, since `since`.
    pub fn placement(&self, since: Value) -> Value {
        let s = |o: &Option<String>| o.as_ref().map_or(Value::Null, Value::string);
        Value::object([
            ("cloud", Value::string(self.cloud.as_str())),
            ("region", Value::string(&self.region)),
            ("zone", s(&self.zone)),
            ("instance_type", s(&self.instance_type)),
            ("since", since),
        ])
    }
}

/// A place from known values; `None` unless the cloud and region are.
fn place_of(
    cloud: &Tf<String>,
    region: &Tf<String>,
    zone: &Tf<String>,
    instance_type: &Tf<String>,
) -> Option<VmPlace> {
    let cloud = spelling::cloud(cloud.known()?)?;
    Some(VmPlace {
        cloud,
        region: spelling::region(Some(cloud), region.known()?),
        zone: zone.known().map(|z| z.trim().to_ascii_lowercase()),
        instance_type: instance_type.known().cloned(),
    })
}

/// The VM's own place (its instance type left to the VM's own values).
pub fn own(v: &Value) -> Option<VmPlace> {
    let m = InstanceModel::of(v);
    let mut p = place_of(&m.cloud, &m.region, &m.zone, &Tf::Null)?;
    p.instance_type = None;
    Some(p)
}

/// The `failover` places with cloud and region known, with their index in the blocks.
pub fn failovers(v: &Value) -> Vec<(usize, VmPlace)> {
    let m = InstanceModel::of(v);
    let blocks: &[Tf<FailoverModel>] = m.failover.known().map(Vec::as_slice).unwrap_or_default();
    blocks
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            let b = b.known()?;
            Some((i, place_of(&b.cloud, &b.region, &b.zone, &b.instance_type)?))
        })
        .collect()
}

/// Whether the `failover` blocks of `prior` and `proposed` name the same places in the
/// same order, however spelled (cloud, region, zone and instance type in other letter
/// case).
pub fn same_failovers(prior: &Value, proposed: &Value) -> bool {
    let count = |v: &Value| match v.get_attr("failover") {
        Some(Value::List(blocks)) => Some(blocks.len()),
        _ => None,
    };
    let alike = |x: &Option<String>, y: &Option<String>| match (x, y) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
        (x, y) => x == y,
    };
    let (a, b) = (failovers(prior), failovers(proposed));
    count(prior).is_some_and(|n| n == a.len())
        && count(proposed) == Some(b.len())
        && a.len() == b.len()
        && a.iter().zip(&b).all(|((_, x), (_, y))| {
            x.cloud == y.cloud
                && x.region == y.region
                && alike(&x.zone, &y.zone)
                && alike(&x.instance_type, &y.instance_type)
        })
}

/// Every place in order: the VM's own, then the `failover` blocks.
pub fn order(v: &Value) -> Vec<VmPlace> {
    own(v)
        .into_iter()
        .chain(failovers(v).into_iter().map(|(_, p)| p))
        .collect()
}

/// Where the VM runs now, from `placement`.
pub fn placement(v: &Value) -> Option<VmPlace> {
    let p = InstanceModel::of(v).placement.into_known()?;
    place_of(&p.cloud, &p.region, &p.zone, &p.instance_type)
}

/// The placement when it is not the VM's own place.
pub fn elsewhere(v: &Value) -> Option<VmPlace> {
    let at = placement(v)?;
    match own(v) {
        Some(own) if own.same(&at) => None,
        _ => Some(at),
    }
}

/// The VM's object at `place`: its cloud, region and zone (null when the place names
/// none), and the place's instance type, or none when `gpu` chooses it there; a VM with
/// neither keeps its own type (the checks refuse that on another cloud).
pub fn at(v: &Value, place: &VmPlace) -> Value {
    let mut out = v.clone();
    set(&mut out, "cloud", Value::string(place.cloud.as_str()));
    set(&mut out, "region", Value::string(&place.region));
    set(
        &mut out,
        "zone",
        place.zone.as_ref().map_or(Value::Null, Value::string),
    );
    let m = InstanceModel::of(v);
    match &place.instance_type {
        Some(t) => set(&mut out, "instance_type", Value::string(t)),
        None if !m.gpu.is_null() => set(&mut out, "instance_type", Value::Null),
        None => {}
    }
    out
}

/// `state` (built at a place) with the user's words put back from `from` where `from`
/// knows them; what the provider filled at the place stays.
pub fn restore(state: &mut Value, from: &Value) {
    if state.is_null() {
        return;
    }
    for a in PLACE_ATTRIBUTES {
        if let Some(x) = from.get_attr(a).filter(|x| x.is_wholly_known()) {
            set(state, a, x.clone());
        }
    }
}

/// The cty type of `placement`.
pub fn placement_type() -> Type {
    Type::object([
        ("cloud", Type::String),
        ("region", Type::String),
        ("zone", Type::String),
        ("instance_type", Type::String),
        ("since", Type::String),
    ])
}

/// Checks the `failover` blocks of `config`: a cloud with VMs, a place not already in the
/// order, an instance type where the VM's own one means nothing (another cloud, no
/// `gpu`), and an `image` only where it is valid (the same cloud; on aws, whose AMIs are
/// regional, the same region).
pub fn check(config: &Value, d: &mut Diagnostics) {
    let m = InstanceModel::of(config);
    let own_place = own(config);
    let blocks: &[Tf<FailoverModel>] = m.failover.known().map(Vec::as_slice).unwrap_or_default();
    let mut earlier: Vec<(Option<usize>, VmPlace)> =
        own_place.iter().cloned().map(|p| (None, p)).collect();
    for (i, b) in blocks.iter().enumerate() {
        let Some(b) = b.known() else { continue };
        let path = AttributePath::attr("failover").then_index(i as i64);
        let name = format!("failover[{i}]");
        let Some(written) = b.cloud.known() else {
            continue;
        };
        let Some(cloud) =
            spelling::cloud(written).filter(|c| gpu_core::registry::instance_rules(*c).is_some())
        else {
            d.attr_error(
                path.then_attr("cloud"),
                format!("Invalid {name}.cloud"),
                format!(
                    "`{name}.cloud` is {written:?}; the clouds with VMs are aws, azure and gcp."
                ),
            );
            continue;
        };
        let Some(place) = place_of(&b.cloud, &b.region, &b.zone, &b.instance_type) else {
            continue;
        };
        let other_cloud = own_place.as_ref().is_some_and(|o| o.cloud != cloud);
        if other_cloud && m.gpu.is_null() && place.instance_type.is_none() {
            d.attr_error(
                path.clone().then_attr("instance_type"),
                format!("Missing {name}.instance_type"),
                format!(
                    "`{name}` is on {cloud}, and the VM's `instance_type` {:?} is another cloud's: give this place its own `instance_type`, or set `gpu` so each place gets its own from the catalog.",
                    opt(&m.instance_type).unwrap_or_default()
                ),
            );
        }
        if let (Some(own), Some(_)) = (&own_place, opt(&m.image)) {
            let regional = own.cloud == Cloud::Aws && own.region != place.region;
            if own.cloud != cloud || regional {
                d.attr_error(
                    AttributePath::attr("image"),
                    "An image for one place only",
                    format!(
                        "`image` {:?} is {}, but `{name}` is {}: leave `image` unset so each place gets its cloud's NVIDIA driver + CUDA image, or drop that place.",
                        text(&m.image),
                        if regional { format!("an AMI of {}", own.region) } else { format!("a {} image", own.cloud) },
                        place.label()
                    ),
                );
            }
        }
        if let Some((j, _)) = earlier
            .iter()
            .find(|(_, p)| p.same(&place) && (p.zone.is_some() == place.zone.is_some()))
        {
            let first = match j {
                None => "the VM's own `cloud`, `region` and `zone`".to_string(),
                Some(j) => format!("`failover[{j}]`"),
            };
            d.attr_error(
                path,
                format!("Repeated place in {name}"),
                format!(
                    "`{name}` is {}, which is already {first}: each place is tried once, so remove it or name another zone or region.",
                    place.label()
                ),
            );
            continue;
        }
        earlier.push((Some(i), place));
    }
}
