//! The places a pool may run, in the order written: its own `cloud`, `region` and
//! `cluster`, then each `failover` block; where it runs now (the computed `placement`);
//! and a pool's object as seen at one place (its cloud, region and cluster replaced), so
//! the code that plans, applies and reads one place serves every place.

use gpu_core::offer::Cloud;
use gpu_core::pool::spelling;
use gpu_core::seam::ClusterRef;
use tfplugin::{AttributePath, Diagnostics, Tf, Type, Value};

use super::model::{self, PoolModel};
use super::plan::set;

/// The attributes a place replaces in the pool's object, and which the state keeps as
/// the user wrote them.
const PLACE_ATTRIBUTES: [&str; 3] = ["cloud", "region", "cluster"];

/// One place a pool may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The cloud.
    pub cloud: Cloud,
    /// The region as the cloud spells it.
    pub region: String,
    /// The cluster as written.
    pub cluster: String,
}

impl Place {
    /// `gcp us-central1`: how messages name the place.
    pub fn label(&self) -> String {
        format!("{} {}", self.cloud, self.region)
    }

    /// Whether `other` is the same place: same cloud and region, and the same cluster as
    /// its cloud reads it (any spelling of one id).
    pub fn same(&self, other: &Place) -> bool {
        let cluster = |p: &Place| {
            ClusterRef::parse(p.cloud, &p.region, &p.cluster)
                .map(|c| c.id().to_ascii_lowercase())
                .unwrap_or_else(|_| p.cluster.to_ascii_lowercase())
        };
        self.cloud == other.cloud && self.region == other.region && cluster(self) == cluster(other)
    }

    /// The place's value for `placement`: where, the instance type priced first there, and
    /// since when (`since` as stored, or unknown until the apply).
    pub fn placement(&self, instance_type: Value, since: Value) -> Value {
        Value::object([
            ("cloud", Value::string(self.cloud.as_str())),
            ("region", Value::string(&self.region)),
            ("cluster", Value::string(&self.cluster)),
            ("instance_type", instance_type),
            ("since", since),
        ])
    }
}

/// A place from its three values (any spelling of the cloud and region); `None` unless
/// all are known and the cloud is one.
fn place_of(cloud: &Tf<String>, region: &Tf<String>, cluster: &Tf<String>) -> Option<Place> {
    let cloud = spelling::cloud(cloud.known()?)?;
    Some(Place {
        cloud,
        region: spelling::region(Some(cloud), region.known()?),
        cluster: cluster.known()?.clone(),
    })
}

/// The pool's own place.
pub fn own(v: &Value) -> Option<Place> {
    let m = PoolModel::of(v);
    place_of(&m.cloud, &m.region, &m.cluster)
}

/// The `failover` places with every value known, with their index in the blocks.
pub fn failovers(v: &Value) -> Vec<(usize, Place)> {
    let m = PoolModel::of(v);
    let blocks = m.failover.known().map(Vec::as_slice).unwrap_or_default();
    blocks
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            let b = b.known()?;
            Some((i, place_of(&b.cloud, &b.region, &b.cluster)?))
        })
        .collect()
}

/// Whether the `failover` blocks of `prior` and `proposed` name the same places in the
/// same order, however spelled (`GCP` for `gcp`, a region in other letter case).
pub fn same_failovers(prior: &Value, proposed: &Value) -> bool {
    let count = |v: &Value| match v.get_attr("failover") {
        Some(Value::List(blocks)) => Some(blocks.len()),
        _ => None,
    };
    let (a, b) = (failovers(prior), failovers(proposed));
    count(prior).is_some_and(|n| n == a.len())
        && count(proposed) == Some(b.len())
        && a.len() == b.len()
        && a.iter().zip(&b).all(|((_, x), (_, y))| x.same(y))
}

/// Every place in order: the pool's own, then the `failover` blocks.
pub fn order(v: &Value) -> Vec<Place> {
    own(v)
        .into_iter()
        .chain(failovers(v).into_iter().map(|(_, p)| p))
        .collect()
}

/// Where the pool runs now, from the computed `placement`; `None` when not recorded (a
/// pool from before failover, until it is read).
pub fn placement(v: &Value) -> Option<Place> {
    let p = PoolModel::of(v).placement.into_known()?;
    place_of(&p.cloud, &p.region, &p.cluster)
}

/// The pool's placement when it is not the pool's own place: it runs on a failover place.
pub fn elsewhere(v: &Value) -> Option<Place> {
    let at = placement(v)?;
    match own(v) {
        Some(own) if own.same(&at) => None,
        _ => Some(at),
    }
}

/// The first of pool `v`'s `instance_types` (the value `placement.instance_type` holds),
/// or null.
pub fn first_type(v: &Value) -> Value {
    model::strings(&PoolModel::of(v).instance_types)
        .and_then(|t| t.first().cloned())
        .map_or(Value::Null, Value::string)
}

/// The pool's object at `place`: its cloud, region and cluster replaced, and `driver`
/// (EKS's) dropped at a place on another cloud.
pub fn at(v: &Value, place: &Place) -> Value {
    let mut out = v.clone();
    set(&mut out, "cloud", Value::string(place.cloud.as_str()));
    set(&mut out, "region", Value::string(&place.region));
    set(&mut out, "cluster", Value::string(&place.cluster));
    if place.cloud != Cloud::Aws {
        set(&mut out, "driver", Value::Null);
    }
    out
}

/// `state` (built at a place) with the attributes a place replaces set back to `from`'s,
/// as the user wrote them (and `driver`, EKS's, when the place is on another cloud).
pub fn restore(state: &mut Value, from: &Value) {
    if state.is_null() {
        return;
    }
    let on_aws = spelling::cloud(&model::text(&PoolModel::of(state).cloud)) == Some(Cloud::Aws);
    if !on_aws {
        set(
            state,
            "driver",
            from.get_attr("driver").cloned().unwrap_or(Value::Null),
        );
    }
    for a in PLACE_ATTRIBUTES {
        set(state, a, from.get_attr(a).cloned().unwrap_or(Value::Null));
    }
}

/// The cty type of `placement`.
pub fn placement_type() -> Type {
    Type::object([
        ("cloud", Type::String),
        ("region", Type::String),
        ("cluster", Type::String),
        ("instance_type", Type::String),
        ("since", Type::String),
    ])
}

/// Checks the `failover` blocks of `config` (validate and plan): each a cloud with node
/// groups, a cluster of that cloud, and a place not already in the order.
pub fn check(config: &Value, d: &mut Diagnostics) {
    let m = PoolModel::of(config);
    let own = own(config);
    let blocks = m.failover.known().map(Vec::as_slice).unwrap_or_default();
    let mut earlier: Vec<(Option<usize>, Place)> = own.into_iter().map(|p| (None, p)).collect();
    for (i, b) in blocks.iter().enumerate() {
        let Some(b) = b.known() else { continue };
        let path = AttributePath::attr("failover").then_index(i as i64);
        let name = format!("failover[{i}]");
        let Some(written) = b.cloud.known() else {
            continue;
        };
        let Some(cloud) =
            spelling::cloud(written).filter(|c| gpu_core::registry::node_group_rules(*c).is_some())
        else {
            d.attr_error(
                path.clone().then_attr("cloud"),
                format!("Invalid {name}.cloud"),
                format!(
                    "`{name}.cloud` is {written:?}; the clouds with node pools are aws, azure and gcp."
                ),
            );
            continue;
        };
        let (Some(region), Some(cluster)) = (b.region.known(), b.cluster.known()) else {
            continue;
        };
        let region = spelling::region(Some(cloud), region);
        if let Err(e) = ClusterRef::parse(cloud, &region, cluster) {
            d.attr_error(
                path.clone().then_attr("cluster"),
                format!("Invalid {name}.cluster"),
                format!("`{name}.cluster` is not a cluster of {cloud} {region}: {e}"),
            );
            continue;
        }
        let place = Place {
            cloud,
            region,
            cluster: cluster.clone(),
        };
        if let Some((j, _)) = earlier.iter().find(|(_, p)| p.same(&place)) {
            let first = match j {
                None => "the pool's own `cloud`, `region` and `cluster`".to_string(),
                Some(j) => format!("`failover[{j}]`"),
            };
            d.attr_error(
                path,
                format!("Repeated place in {name}"),
                format!(
                    "`{name}` is {} cluster {:?}, which is already {first}: each place is tried once, so remove it or name another cluster.",
                    place.label(),
                    place.cluster
                ),
            );
            continue;
        }
        earlier.push((Some(i), place));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(failover: Vec<Value>) -> Value {
        Value::object([
            ("cloud", Value::string("AWS")),
            ("region", Value::string("US-EAST-1")),
            ("cluster", Value::string("train")),
            ("driver", Value::string("bottlerocket_nvidia")),
            ("failover", Value::List(failover)),
        ])
    }

    fn place(cloud: &str, region: &str, cluster: &str) -> Value {
        Value::object([
            ("cloud", Value::string(cloud)),
            ("region", Value::string(region)),
            ("cluster", Value::string(cluster)),
        ])
    }

    const GKE: &str = "projects/p/locations/us-central1/clusters/c";

    #[test]
    fn the_order_is_the_own_place_then_the_blocks_in_any_spelling() {
        let v = pool(vec![place("GCP", "us-central1", GKE)]);
        let places = order(&v);
        assert_eq!(places.len(), 2);
        assert_eq!(places[0].label(), "aws us-east-1");
        assert_eq!(places[1].label(), "gcp us-central1");
        assert!(
            crate::resources::placing::has_failover(&v)
                && !crate::resources::placing::has_failover(&pool(vec![]))
        );
    }

    #[test]
    fn a_pool_at_a_place_keeps_the_users_words_when_restored() {
        let v = pool(vec![place("gcp", "us-central1", GKE)]);
        let at_gcp = at(&v, &order(&v)[1]);
        assert_eq!(at_gcp.get_attr("cloud"), Some(&Value::string("gcp")));
        assert_eq!(at_gcp.get_attr("cluster"), Some(&Value::string(GKE)));
        assert_eq!(at_gcp.get_attr("driver"), Some(&Value::Null));
        let mut back = at_gcp.clone();
        restore(&mut back, &v);
        assert_eq!(back, v);
    }

    #[test]
    fn bad_failover_blocks_are_refused_on_their_paths() {
        let v = pool(vec![
            place("aws", "us-east-1", "TRAIN"),
            place("gcp", "us-central1", "my-eks"),
            place("oracle", "x", "y"),
            place("gcp", "us-central1", GKE),
            place("GCP", "US-CENTRAL1", GKE),
        ]);
        let mut d = Diagnostics::new();
        check(&v, &mut d);
        let seen: Vec<(String, String)> = d
            .into_iter()
            .map(|x| {
                (
                    x.attribute
                        .as_ref()
                        .map(|p| p.to_string())
                        .unwrap_or_default(),
                    x.detail.clone(),
                )
            })
            .collect();
        assert_eq!(seen.len(), 4, "{seen:#?}");
        assert_eq!(seen[0].0, "failover[0]");
        assert!(seen[0].1.contains("the pool's own"), "{}", seen[0].1);
        assert_eq!(seen[1].0, "failover[1].cluster");
        assert!(seen[1].1.contains("projects/"), "{}", seen[1].1);
        assert_eq!(seen[2].0, "failover[2].cloud");
        assert_eq!(seen[3].0, "failover[4]");
        assert!(seen[3].1.contains("`failover[3]`"), "{}", seen[3].1);
        let mut clean = Diagnostics::new();
        check(&pool(vec![place("gcp", "us-central1", GKE)]), &mut clean);
        assert!(!clean.has_errors());
    }

    #[test]
    fn attempts_read_as_the_walk_reported_them() {
        use crate::resources::placing::attempts_value;
        use gpu_core::pool::failover::Attempt;
        let a = Attempt {
            cloud: Cloud::Gcp,
            region: "us-central1".into(),
            cluster: GKE.into(),
            outcome: gpu_core::pool::failover::AttemptOutcome::Refused(
                gpu_core::seam::CapacityOutcome::Stockout,
            ),
            detail: "GCE_STOCKOUT".into(),
            seconds: 12.345,
        };
        let v = attempts_value(&[a]);
        let Value::List(items) = v else { panic!() };
        assert_eq!(
            items[0].get_attr("outcome"),
            Some(&Value::string("stockout"))
        );
        assert_eq!(items[0].get_attr("seconds"), Some(&Value::number(12.3)));
    }
}
