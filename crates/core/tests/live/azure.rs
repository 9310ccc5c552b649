//! Azure Retail Prices API: paging, filters, spot.

use gpu_core::catalog::OriginKind;
use gpu_core::catalog::live::{ProgressEvent, SourceId};
use gpu_core::offer::Cloud;

use crate::server::{Response, Server, fixture};
use crate::{catalog, close, config, find, run, today};

pub const ROWS: &str = "
azure,eastus,,Standard_NC24ads_A100_v4,A100-80GB,1,80,24,220,3.0,0.9,snapshot-az,2026-06-18
azure,westeurope,,Standard_NC4as_T4_v3,T4,1,16,4,28,0.5,,snapshot-az,2026-06-18
azure,japaneast,,Standard_NC4as_T4_v3,T4,1,16,4,28,0.55,,snapshot-az,2026-06-18
";

/// Serves page 1 to the first query and page 2 to its `NextPageLink`.
pub fn azure_handler(req: &crate::server::Request, base: &str) -> Response {
    assert_eq!(req.path(), "/api/retail/prices");
    if req.query("$skip").is_some() {
        Response::json(fixture("azure_page2.json", base))
    } else {
        Response::json(fixture("azure_page1.json", base))
    }
}

#[tokio::test]
async fn pages_filters_and_spot() {
    let server = Server::start(azure_handler);
    let cfg = config("azure", &server.base);
    let base = catalog(ROWS);
    let (r, events) = run(&base, &cfg, &[Cloud::Azure]).await;
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{reqs:#?}");
    assert_eq!(
        reqs[0].query("api-version").as_deref(),
        Some("2023-01-01-preview")
    );
    assert_eq!(
        reqs[0].query("$filter").as_deref(),
        Some(
            "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and (armSkuName eq 'Standard_NC24ads_A100_v4' or armSkuName eq 'Standard_NC4as_T4_v3')"
        )
    );
    assert_eq!(reqs[1].query("$skip").as_deref(), Some("100"));

    let c = &r.catalog;
    assert_eq!(c.origin().kind, OriginKind::Live);
    assert!(
        c.origin().label.contains("azure-retail-prices"),
        "{}",
        c.origin().label
    );
    let a100 = find(c, Cloud::Azure, "eastus", None, "Standard_NC24ads_A100_v4");
    // Latest Linux pay-as-you-go item wins; Windows and Low Priority are skipped.
    close(a100.on_demand_usd_per_hour, 3.4);
    close(a100.spot_usd_per_hour, 1.1);
    assert!(
        a100.source
            .starts_with("on-demand: azure-retail-prices (live"),
        "{}",
        a100.source
    );
    assert!(a100.source.contains("base: snapshot-az"), "{}", a100.source);
    assert_eq!(
        a100.on_demand_origin.as_of.as_deref(),
        Some(today().as_str())
    );
    assert_eq!(a100.spot_origin.as_of.as_deref(), Some(today().as_str()));
    let t4 = find(c, Cloud::Azure, "westeurope", None, "Standard_NC4as_T4_v3");
    close(t4.on_demand_usd_per_hour, 0.6);
    assert_eq!(t4.spot_usd_per_hour, None);
    // No live item for japaneast: the snapshot row is untouched.
    let jp = find(c, Cloud::Azure, "japaneast", None, "Standard_NC4as_T4_v3");
    assert_eq!(
        jp,
        find(
            &base,
            Cloud::Azure,
            "japaneast",
            None,
            "Standard_NC4as_T4_v3"
        )
    );
    // brazilsouth is not in the catalog: not added.
    assert_eq!(c.len(), base.len());

    let s = r.stats_of(SourceId::AzureRetail).unwrap();
    assert_eq!(
        (s.rows_updated, s.pages_fetched, s.scopes_from_network),
        (2, 2, 1)
    );
    assert_eq!(s.quotes, 3);
    assert!(events.contains(&ProgressEvent::PageFetched {
        source: SourceId::AzureRetail,
        scope: "all".into(),
        page: 2,
        of: None
    }));
    assert!(matches!(
        events.first(),
        Some(ProgressEvent::SourceStarted {
            source: SourceId::AzureRetail,
            scopes: 1
        })
    ));
    assert!(matches!(
        events.last(),
        Some(ProgressEvent::SourceFinished {
            source: SourceId::AzureRetail,
            rows_updated: 2
        })
    ));
    // Clouds not asked for are not touched.
    assert!(r.stats_of(SourceId::GcpBillingCatalog).unwrap().skipped);
}

#[tokio::test]
async fn only_the_selected_regions() {
    let server = Server::start(azure_handler);
    let mut cfg = config("azure-regions", &server.base);
    cfg.regions = vec!["westeurope".into()];
    let base = catalog(ROWS);
    let (r, _) = run(&base, &cfg, &[Cloud::Azure]).await;
    let reqs = server.requests();
    // Only the sizes of the selected region are asked for.
    assert_eq!(
        reqs[0].query("$filter").as_deref(),
        Some(
            "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and (armSkuName eq 'Standard_NC4as_T4_v3')"
        )
    );
    close(
        find(
            &r.catalog,
            Cloud::Azure,
            "westeurope",
            None,
            "Standard_NC4as_T4_v3",
        )
        .on_demand_usd_per_hour,
        0.6,
    );
    let east = find(
        &r.catalog,
        Cloud::Azure,
        "eastus",
        None,
        "Standard_NC24ads_A100_v4",
    );
    close(east.on_demand_usd_per_hour, 3.0);
    assert_eq!(r.stats_of(SourceId::AzureRetail).unwrap().rows_updated, 1);
}
