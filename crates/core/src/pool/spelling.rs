//! One canonical form for every pool input whose spelling may vary (letter case, aliases,
//! set order), so that plan, read and apply compare meanings, never raw strings: a
//! re-spelling is never a change, and above all never a replacement.

use std::collections::BTreeSet;

use crate::catalog::Catalog;
use crate::gpu;
use crate::model::DriverPolicy;
use crate::offer::Cloud;

/// The cloud `s` names (`AWS`, `aws`, `google` …), `None` when it names none.
pub fn cloud(s: &str) -> Option<Cloud> {
    s.parse().ok()
}

/// The image family `s` names: its configuration spelling (`al2023_nvidia`) or a cloud's
/// own image name for it (EKS `AL2023_x86_64_NVIDIA`), ignoring case, `-` and `_`.
pub fn driver(s: &str) -> Option<DriverPolicy> {
    DriverPolicy::ALL.into_iter().find(|p| {
        p.is_named(s, None)
            || crate::registry::node_group_clouds().any(|r| p.is_named(s, r.image_of(*p)))
    })
}

/// The registry name of the GPU `s` names (`l4`, `NVIDIA L4` → `L4`), `None` when unknown
/// or ambiguous.
pub fn gpu(s: &str) -> Option<&'static str> {
    gpu::lookup(s).ok().map(|m| m.name)
}

/// A region as its cloud spells it: trimmed and lower-case (`US-EAST-1` → `us-east-1`);
/// Azure's display names lose their spaces too (`East US` → `eastus`).
pub fn region(cloud: Option<Cloud>, s: &str) -> String {
    let lower = s.trim().to_ascii_lowercase();
    if cloud == Some(Cloud::Azure) {
        lower.chars().filter(|c| !c.is_whitespace()).collect()
    } else {
        lower
    }
}

/// An instance type as the catalog spells it on `cloud` (`G6.XLARGE` → `g6.xlarge`,
/// `standard_nc24ads_a100_v4` → `Standard_NC24ads_A100_v4`); trimmed `s` when the catalog
/// has no such type (validation then says so).
pub fn instance_type(catalog: &Catalog, cloud: Option<Cloud>, s: &str) -> String {
    let t = s.trim();
    catalog
        .offers()
        .iter()
        .filter(|o| cloud.is_none_or(|c| o.cloud == c))
        .find(|o| o.instance_type.eq_ignore_ascii_case(t))
        .map_or_else(|| t.to_string(), |o| o.instance_type.clone())
}

/// Instance types as a set of canonical names: their order means nothing to a pool (the
/// on-demand group orders them by price, spot capacity is chosen across all of them).
pub fn instance_type_set(
    catalog: &Catalog,
    cloud: Option<Cloud>,
    types: &[String],
) -> BTreeSet<String> {
    types
        .iter()
        .map(|t| instance_type(catalog, cloud, t))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clouds_gpus_and_regions_have_one_form() {
        assert_eq!(cloud("AWS"), Some(Cloud::Aws));
        assert_eq!(cloud(" Google "), Some(Cloud::Gcp));
        assert_eq!(cloud("aws2"), None);
        assert_eq!(gpu("l4"), Some("L4"));
        assert_eq!(gpu("NVIDIA L4"), gpu("L4"));
        assert_eq!(gpu("h100"), Some("H100"));
        assert_eq!(gpu("no-such-gpu"), None);
        assert_eq!(region(Some(Cloud::Aws), " US-EAST-1"), "us-east-1");
        assert_eq!(region(Some(Cloud::Azure), "East US"), "eastus");
        assert_eq!(region(Some(Cloud::Gcp), "US-Central1"), "us-central1");
    }

    #[test]
    fn instance_types_take_the_catalog_spelling_and_ignore_order() {
        let c = Catalog::embedded();
        assert_eq!(instance_type(c, Some(Cloud::Aws), "G6.XLARGE"), "g6.xlarge");
        let azure = c
            .offers()
            .iter()
            .find(|o| o.cloud == Cloud::Azure && o.instance_type.contains('_'))
            .expect("an Azure VM size");
        assert_eq!(
            instance_type(c, Some(Cloud::Azure), &azure.instance_type.to_lowercase()),
            azure.instance_type
        );
        assert_eq!(instance_type(c, Some(Cloud::Aws), "zz.huge"), "zz.huge");
        let a = instance_type_set(
            c,
            Some(Cloud::Aws),
            &["g6.xlarge".into(), "g6.2xlarge".into()],
        );
        let b = instance_type_set(
            c,
            Some(Cloud::Aws),
            &["G6.2XLARGE".into(), "g6.xlarge".into()],
        );
        assert_eq!(a, b);
        let other = instance_type_set(c, Some(Cloud::Aws), &["g6.4xlarge".into()]);
        assert_ne!(a, other);
    }
}
