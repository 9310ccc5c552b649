//! Spend summed by cloud and by the values of chosen label keys (`team`, `project`).

use std::collections::BTreeMap;

use super::Item;
use crate::offer::Cloud;

/// The money of one cloud and one group.
#[derive(Debug, Clone, PartialEq)]
pub struct Total {
    /// The cloud.
    pub cloud: Cloud,
    /// Each `group_by` key and the items' value of it (`""` where an item lacks the key).
    pub group: BTreeMap<String, String>,
    /// USD per month of the group's priced items.
    pub monthly_usd: f64,
    /// USD per month its commitments bill for unused capacity (part of `monthly_usd`).
    pub idle_commitment_monthly_usd: f64,
    /// Items in the group without a price (not counted in the money).
    pub unpriced: u32,
}

/// `items` summed per cloud and per combination of the `group_by` keys' values, in a
/// stable order (cloud, then group).
pub fn totals(items: &[Item], group_by: &[String]) -> Vec<Total> {
    let values = |item: &Item| -> Vec<String> {
        group_by
            .iter()
            .map(|k| item.labels.get(k).cloned().unwrap_or_default())
            .collect()
    };
    super::spend::sum_by(
        items,
        |item| (item.cloud, values(item)),
        |item| group_by.iter().cloned().zip(values(item)).collect(),
    )
    .into_iter()
    .map(|((cloud, _), row)| Total {
        cloud,
        group: row.group,
        monthly_usd: row.monthly_usd,
        idle_commitment_monthly_usd: row.idle_commitment_monthly_usd,
        unpriced: row.unpriced,
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::ItemKind;

    fn item(kind: ItemKind, cloud: Cloud, team: Option<&str>, monthly: Option<f64>) -> Item {
        Item {
            kind,
            cloud,
            region: "r".into(),
            cluster: None,
            name: "n".into(),
            managed: true,
            gpu: None,
            gpu_count: None,
            nodes: 1,
            capacity: "on_demand".into(),
            hourly_usd: monthly.map(|m| m / 730.0),
            monthly_usd: monthly,
            labels: team
                .map(|t| [("team".to_string(), t.to_string())].into())
                .unwrap_or_default(),
            import_id: None,
            price_source: String::new(),
            used_instances: None,
            utilization: None,
            idle_monthly_usd: (kind == ItemKind::Commitment).then_some(monthly.unwrap_or(0.0)),
        }
    }

    #[test]
    fn money_is_summed_per_cloud_and_group_and_unpriced_items_are_counted_not_zeroed() {
        let items = [
            item(ItemKind::NodePool, Cloud::Aws, Some("ml"), Some(1000.0)),
            item(ItemKind::Instance, Cloud::Aws, Some("ml"), Some(500.0)),
            item(ItemKind::Commitment, Cloud::Aws, Some("ml"), Some(200.0)),
            item(ItemKind::Instance, Cloud::Aws, None, None),
            item(ItemKind::NodePool, Cloud::Gcp, Some("ml"), Some(50.0)),
        ];
        let t = totals(&items, &["team".to_string()]);
        assert_eq!(t.len(), 3);
        let aws_ml = t
            .iter()
            .find(|x| x.cloud == Cloud::Aws && x.group["team"] == "ml")
            .unwrap();
        assert_eq!(aws_ml.monthly_usd, 1700.0);
        assert_eq!(aws_ml.idle_commitment_monthly_usd, 200.0);
        let aws_none = t
            .iter()
            .find(|x| x.cloud == Cloud::Aws && x.group["team"].is_empty());
        assert_eq!(aws_none.unwrap().unpriced, 1);
        assert_eq!(aws_none.unwrap().monthly_usd, 0.0);
    }
}
