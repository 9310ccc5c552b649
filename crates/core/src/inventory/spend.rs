//! Spend by any keys: `cloud`, `kind`, `region` (the item's own) or a label key, for the
//! `report spend` command.

use std::collections::BTreeMap;

use super::{Item, ItemKind};

/// The money of one combination of the keys' values.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SpendRow {
    /// Each key and its value (`""` where an item lacks the label).
    pub group: BTreeMap<String, String>,
    /// USD per month of the priced items.
    pub monthly_usd: f64,
    /// USD per month commitments bill for unused capacity (part of `monthly_usd`).
    pub idle_commitment_monthly_usd: f64,
    /// Items in the group.
    pub items: u32,
    /// Items without a price (not in the money).
    pub unpriced: u32,
}

/// An item's value of `key`: its cloud, kind or region, else the label.
pub fn value_of(item: &Item, key: &str) -> String {
    match key {
        "cloud" => item.cloud.as_str().to_string(),
        "kind" => item.kind.as_str().to_string(),
        "region" => item.region.clone(),
        label => item.labels.get(label).cloned().unwrap_or_default(),
    }
}

/// `items` summed per key `key_of` gives; each row's `group` is `group_of` of its first
/// item. The one summing loop of spend rows and of `totals`.
pub(super) fn sum_by<K: Ord>(
    items: &[Item],
    key_of: impl Fn(&Item) -> K,
    group_of: impl Fn(&Item) -> BTreeMap<String, String>,
) -> BTreeMap<K, SpendRow> {
    let mut rows: BTreeMap<K, SpendRow> = BTreeMap::new();
    for item in items {
        let row = rows.entry(key_of(item)).or_insert_with(|| SpendRow {
            group: group_of(item),
            monthly_usd: 0.0,
            idle_commitment_monthly_usd: 0.0,
            items: 0,
            unpriced: 0,
        });
        row.items += 1;
        match item.monthly_usd {
            Some(m) => row.monthly_usd += m,
            None => row.unpriced += 1,
        }
        if item.kind == ItemKind::Commitment {
            row.idle_commitment_monthly_usd += item.idle_monthly_usd.unwrap_or(0.0);
        }
    }
    rows
}

/// `items` summed by the values of `keys`, dearest first (then by the values).
pub fn spend_by(items: &[Item], keys: &[String]) -> Vec<SpendRow> {
    let values = |item: &Item| -> Vec<String> { keys.iter().map(|k| value_of(item, k)).collect() };
    let mut out: Vec<SpendRow> = sum_by(items, values, |item| {
        keys.iter().cloned().zip(values(item)).collect()
    })
    .into_values()
    .collect();
    out.sort_by(|a, b| b.monthly_usd.total_cmp(&a.monthly_usd));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offer::Cloud;

    fn item(cloud: Cloud, team: &str, monthly: Option<f64>) -> Item {
        Item {
            kind: ItemKind::NodePool,
            cloud,
            region: "r".into(),
            cluster: None,
            name: "n".into(),
            managed: false,
            gpu: None,
            gpu_count: None,
            nodes: 1,
            capacity: "spot".into(),
            hourly_usd: None,
            monthly_usd: monthly,
            labels: [("team".to_string(), team.to_string())].into(),
            import_id: None,
            price_source: String::new(),
            used_instances: None,
            utilization: None,
            idle_monthly_usd: None,
        }
    }

    #[test]
    fn rows_group_by_item_fields_and_labels_dearest_first() {
        let items = [
            item(Cloud::Aws, "ml", Some(10.0)),
            item(Cloud::Gcp, "ml", Some(30.0)),
            item(Cloud::Aws, "ml", None),
            item(Cloud::Aws, "web", Some(5.0)),
        ];
        let by_team = spend_by(&items, &["team".into()]);
        assert_eq!(by_team[0].group["team"], "ml");
        assert_eq!(
            (
                by_team[0].monthly_usd,
                by_team[0].items,
                by_team[0].unpriced
            ),
            (40.0, 3, 1)
        );
        let by_both = spend_by(&items, &["team".into(), "cloud".into()]);
        assert_eq!(by_both.len(), 3);
        assert_eq!(by_both[0].group["cloud"], "gcp");
    }
}
