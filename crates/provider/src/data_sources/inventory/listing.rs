//! Reading the estate: each place `Listing` names, through the clouds' own listing calls
//! (node groups of each cluster, the VMs of GPU machine types, every commitment). A place that cannot
//! be read is reported and the rest goes on. Nothing here mutates.

use gpu_core::catalog::Catalog;
use gpu_core::inventory::{
    GroupPlace, Item, ItemKind, Unread, commitment_item, instance_item, node_group_item,
};
use gpu_core::offer::Cloud;
use gpu_core::seam::instances::{MARKER_LABEL, MARKER_TAG};
use gpu_core::seam::{ClusterRef, ConnectCommitments as _, ConnectInstances as _, Place};

use super::args::Listing;
use crate::clouds::{Clouds, cloud_name};
use crate::resources::node_pool::import::import_id;
use gpu_core::seam::region_of_location;

/// Everything `listing` names, and the places that could not be read.
pub async fn read(
    listing: &Listing,
    clouds: &Clouds,
    catalog: &Catalog,
) -> (Vec<Item>, Vec<Unread>) {
    let mut items = Vec::new();
    let mut unread = Vec::new();
    for kind in &listing.kinds {
        match kind {
            ItemKind::NodePool => {
                for (cluster, written) in &listing.clusters {
                    if listing.clouds.contains(&cluster.cloud()) {
                        node_pools(cluster, written, clouds, catalog, &mut items, &mut unread)
                            .await;
                    }
                }
            }
            ItemKind::Instance => {
                instances(listing, clouds, catalog, &mut items, &mut unread).await
            }
            ItemKind::Commitment => {
                // After a cloud's first failure its other regions are not asked: the same
                // credentials or endpoint would fail each one in turn, slowly.
                let mut failed: Vec<Cloud> = Vec::new();
                for (cloud, region) in &listing.regions {
                    if failed.contains(cloud) {
                        continue;
                    }
                    match list_commitments(*cloud, region, clouds).await {
                        Ok(list) => items.extend(
                            list.iter()
                                .map(|c| commitment_item(c, *cloud, region, catalog)),
                        ),
                        Err(why) => {
                            failed.push(*cloud);
                            let rest = listing
                                .regions
                                .iter()
                                .filter(|(c, r)| c == cloud && r > region)
                                .count();
                            let why = if rest == 0 {
                                why
                            } else {
                                format!("{why} (its {rest} regions after it were not asked)")
                            };
                            unread.push(Unread {
                                what: format!("{} {region} commitments", cloud_name(*cloud)),
                                why,
                            });
                        }
                    }
                }
            }
        }
    }
    (items, unread)
}

async fn list_commitments(
    cloud: Cloud,
    region: &str,
    clouds: &Clouds,
) -> Result<Vec<gpu_core::commitment::LiveCommitment>, String> {
    let store = clouds
        .commitments(cloud, region)
        .await
        .map_err(|e| e.to_string())?;
    store.list(region).await.map_err(|e| e.to_string())
}

/// The region of a cluster (AKS: read from the cluster).
async fn region_of(
    cluster: &ClusterRef,
    groups: &dyn gpu_core::seam::NodeGroups,
) -> Result<String, String> {
    match cluster {
        ClusterRef::Eks { region, .. } => Ok(region.clone()),
        ClusterRef::Gke { location, .. } => Ok(region_of_location(location)),
        ClusterRef::Aks { .. } => groups
            .cluster_region(cluster)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "the cluster does not say its location".to_string()),
    }
}

async fn node_pools(
    cluster: &ClusterRef,
    written: &str,
    clouds: &Clouds,
    catalog: &Catalog,
    items: &mut Vec<Item>,
    unread: &mut Vec<Unread>,
) {
    let cloud = cluster.cloud();
    let region = match cluster {
        ClusterRef::Eks { region, .. } => region.clone(),
        _ => String::new(),
    };
    let fail = |why: String| Unread {
        what: written.to_string(),
        why,
    };
    let groups = match clouds.node_groups(cloud, &region).await {
        Ok(g) => g,
        Err(d) => {
            let why =
                d.0.iter()
                    .map(|x| x.detail.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
            unread.push(fail(why));
            return;
        }
    };
    let region = match region_of(cluster, groups.as_ref()).await {
        Ok(r) => r,
        Err(why) => {
            unread.push(fail(why));
            return;
        }
    };
    let names = match groups.list_groups(cluster).await {
        Ok(n) => n,
        Err(e) => {
            unread.push(fail(e.to_string()));
            return;
        }
    };
    let tag = groups.traits().ownership_tag;
    let place = GroupPlace {
        cloud,
        region,
        cluster: written.to_string(),
    };
    for name in names {
        match groups.get_group(cluster, &name).await {
            Ok(Some(group)) => {
                let pool = group.spec.tags.get(tag).cloned();
                let id = pool.map(|p| import_id(cluster, &p));
                items.extend(node_group_item(&group, &place, tag, id, catalog));
            }
            Ok(None) => {}
            Err(e) => unread.push(fail(format!("{name}: {e}"))),
        }
    }
}

/// The provider's own VMs in the regions asked (listing every GPU VM of an account is not
/// built yet).
async fn instances(
    listing: &Listing,
    clouds: &Clouds,
    catalog: &Catalog,
    items: &mut Vec<Item>,
    unread: &mut Vec<Unread>,
) {
    for cloud in &listing.clouds {
        let regions: Vec<&String> = listing
            .regions
            .iter()
            .filter(|(c, _)| c == cloud)
            .map(|(_, r)| r)
            .collect();
        if regions.is_empty() {
            continue;
        }
        // EC2 lists per region; Compute Engine and Azure per project or subscription.
        let places: Vec<String> = match cloud {
            Cloud::Aws => regions.iter().map(|r| r.to_string()).collect(),
            _ => vec![String::new()],
        };
        let scope = match cloud {
            Cloud::Gcp => clouds.gcp_project().map(str::to_string),
            Cloud::Azure => clouds.azure_subscription().map(str::to_string),
            _ => None,
        };
        // The machine types the catalog has GPUs for: a VM of one is a GPU VM, ours or not.
        let gpu_types: std::collections::BTreeSet<String> = catalog
            .offers()
            .iter()
            .filter(|o| o.cloud == *cloud)
            .map(|o| o.instance_type.to_ascii_lowercase())
            .collect();
        for region in places {
            let what = if region.is_empty() {
                format!(
                    "{} instances (every region of the account)",
                    cloud_name(*cloud)
                )
            } else {
                format!("{} {region} instances", cloud_name(*cloud))
            };
            let place = Place {
                cloud: *cloud,
                region: region.clone(),
                scope: scope.clone(),
            };
            let listed = match clouds.instances(&place).await {
                Ok(vms) if listing.ours_only => vms.list_managed().await,
                Ok(vms) => {
                    vms.list_gpu(&|machine| gpu_types.contains(&machine.to_ascii_lowercase()))
                        .await
                }
                Err(e) => Err(e),
            };
            match listed {
                Ok(vms) => {
                    for vm in vms
                        .iter()
                        .filter(|v| regions.iter().any(|r| r.eq_ignore_ascii_case(&v.region)))
                    {
                        let tag = if *cloud == Cloud::Aws {
                            MARKER_TAG
                        } else {
                            MARKER_LABEL
                        };
                        // Only a VM the provider made is a `gpu_instance` to adopt.
                        let id = match cloud {
                            _ if !vm.labels.contains_key(tag) => None,
                            Cloud::Aws => Some(format!("aws/{}/{}", vm.region, vm.id)),
                            _ => Some(vm.id.clone()),
                        };
                        items.push(instance_item(vm, *cloud, tag, id, catalog));
                    }
                }
                Err(e) => {
                    unread.push(Unread {
                        what,
                        why: e.to_string(),
                    });
                    // The other regions would fail the same way.
                    break;
                }
            }
        }
    }
}
