//! An [`Offer`]: one instance type in one place, with its GPUs, specs and prices.

use std::fmt;
use std::str::FromStr;

use crate::gpu::GpuModel;

/// A cloud (or neocloud) that sells GPU instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cloud {
    /// Amazon Web Services.
    Aws,
    /// Microsoft Azure.
    Azure,
    /// Google Cloud.
    Gcp,
    /// Cudo Compute.
    Cudo,
    /// Nebius.
    Nebius,
    /// Hyperbolic.
    Hyperbolic,
}

impl Cloud {
    /// Every cloud, in their sort order.
    pub const ALL: [Cloud; 6] = [
        Cloud::Aws,
        Cloud::Azure,
        Cloud::Gcp,
        Cloud::Cudo,
        Cloud::Nebius,
        Cloud::Hyperbolic,
    ];

    /// The lower-case name used in data and configuration: `aws`, `azure`, `gcp` …
    pub fn as_str(self) -> &'static str {
        match self {
            Cloud::Aws => "aws",
            Cloud::Azure => "azure",
            Cloud::Gcp => "gcp",
            Cloud::Cudo => "cudo",
            Cloud::Nebius => "nebius",
            Cloud::Hyperbolic => "hyperbolic",
        }
    }
}

/// A cloud serializes as its name (`aws`, `gcp`, ...), as users write it.
impl serde::Serialize for Cloud {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl fmt::Display for Cloud {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A cloud name that is not one of [`Cloud::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown cloud `{0}`; valid: aws, azure, gcp, cudo, nebius, hyperbolic")]
pub struct UnknownCloud(pub String);

impl FromStr for Cloud {
    type Err = UnknownCloud;

    /// Parses a cloud name, case-insensitively; `google` is accepted for `gcp`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "aws" => Ok(Cloud::Aws),
            "azure" => Ok(Cloud::Azure),
            "gcp" | "google" => Ok(Cloud::Gcp),
            "cudo" => Ok(Cloud::Cudo),
            "nebius" => Ok(Cloud::Nebius),
            "hyperbolic" => Ok(Cloud::Hyperbolic),
            _ => Err(UnknownCloud(s.to_string())),
        }
    }
}

/// One instance type offered in one region (and zone, where the source prices zones).
///
/// Prices are USD per instance-hour, `None` where the source has none: never estimated.
#[derive(Debug, Clone, PartialEq)]
pub struct Offer {
    /// The cloud selling it.
    pub cloud: Cloud,
    /// Region, as the cloud spells it (`us-east-1`, `eastus`, `us-central1`).
    pub region: String,
    /// Availability zone (AWS zone id such as `use1-az4`) where prices are per zone.
    pub zone: Option<String>,
    /// The cloud's instance type / VM size / machine type name.
    pub instance_type: String,
    /// The GPU model.
    pub gpu: &'static GpuModel,
    /// GPUs per instance; fractional for partial-GPU sizes, `None` where no source confirms it.
    pub gpu_count: Option<f64>,
    /// Memory per GPU (or per GPU slice) in GiB, as the source reports it.
    pub gpu_memory_gib: Option<f64>,
    /// vCPUs per instance.
    pub vcpus: Option<f64>,
    /// Instance memory in GiB.
    pub memory_gib: Option<f64>,
    /// On-demand price of the whole instance, USD per hour.
    pub on_demand_usd_per_hour: Option<f64>,
    /// Spot price of the whole instance, USD per hour.
    pub spot_usd_per_hour: Option<f64>,
    /// Where the row (specs, availability and prices) came from, for people.
    pub source: String,
    /// Source and date of the on-demand price (empty when there is none).
    pub on_demand_origin: PriceOrigin,
    /// Source and date of the spot price (empty when there is none).
    pub spot_origin: PriceOrigin,
}

/// Where one price came from and how old it is: each price of a row has its own, so that
/// refreshing one never re-dates another.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PriceOrigin {
    /// The source of the price (repository and file, or live API), for people.
    pub source: String,
    /// Date (`YYYY-MM-DD`) of the price, `None` where the source is undated.
    pub as_of: Option<String>,
    /// Why the price is known (or suspected) not to hold any more, from the vendored stale
    /// list (`data/stale_prices.csv`); rankings leave such a price out unless asked not to.
    pub stale: Option<String>,
}

impl PriceOrigin {
    /// An origin with `source` and `as_of`.
    pub fn new(source: impl Into<String>, as_of: Option<String>) -> Self {
        PriceOrigin {
            source: source.into(),
            as_of,
            stale: None,
        }
    }

    /// The source for people, with why the price is stale when it is:
    /// `skypilot-catalog v6 … (STALE: predates the 2025-06 AWS P4/P5 price reduction; …)`.
    pub fn labelled_source(&self) -> String {
        match &self.stale {
            Some(why) => format!("{} (STALE: {why})", self.source),
            None => self.source.clone(),
        }
    }

    /// Whole days from `as_of` to the day `today` (days since 1970-01-01); `None` when
    /// undated. Negative for a date in the future.
    pub fn age_days(&self, today: i64) -> Option<i64> {
        let dated = crate::time::days_of_date(self.as_of.as_deref()?)?;
        Some(today - dated)
    }

    /// `2026-07-20 (136 days old)`, or `undated`: how answers and warnings show it.
    pub fn describe_age(&self, today: i64) -> String {
        match (&self.as_of, self.age_days(today)) {
            (Some(d), Some(age)) => format!("{d} ({age} days old)"),
            _ => "undated".to_string(),
        }
    }
}

impl Offer {
    /// The price per hour for `spot` or on-demand capacity, if the source has one.
    pub fn price(&self, spot: bool) -> Option<f64> {
        if spot {
            self.spot_usd_per_hour
        } else {
            self.on_demand_usd_per_hour
        }
    }

    /// Source and date of the `spot` (or on-demand) price.
    pub fn origin(&self, spot: bool) -> &PriceOrigin {
        if spot {
            &self.spot_origin
        } else {
            &self.on_demand_origin
        }
    }

    /// The key of this offer bought as spot (`true`) or on-demand.
    pub fn key(&self, spot: bool) -> OfferKey {
        OfferKey {
            cloud: self.cloud,
            region: self.region.clone(),
            zone: self.zone.clone(),
            instance_type: self.instance_type.clone(),
            spot,
        }
    }

    /// Whether `key` names this offer (with either capacity type).
    pub fn has_key(&self, key: &OfferKey) -> bool {
        self.cloud == key.cloud
            && self.region == key.region
            && self.zone == key.zone
            && self.instance_type == key.instance_type
    }

    /// Memory of one GPU (or slice) for VRAM filters: for whole GPUs the larger of the
    /// reported and the model's nominal figure (EC2 reports 22.35 GiB for a 24 GB L4), for
    /// slices the reported figure; `None` when unknown.
    pub fn vram_per_gpu_gib(&self) -> Option<f64> {
        match (self.gpu_count, self.gpu_memory_gib) {
            (Some(c), reported) if c >= 1.0 => {
                Some(reported.map_or(self.gpu.vram_gib, |r| r.max(self.gpu.vram_gib)))
            }
            (_, reported) => reported,
        }
    }
}

/// What identifies one buyable item: an offer plus the capacity type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OfferKey {
    /// The cloud.
    pub cloud: Cloud,
    /// The region.
    pub region: String,
    /// The zone, where the offer has one.
    pub zone: Option<String>,
    /// The instance type.
    pub instance_type: String,
    /// Spot (`true`) or on-demand.
    pub spot: bool,
}

impl fmt::Display for OfferKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.cloud, self.region)?;
        if let Some(z) = &self.zone {
            write!(f, "/{z}")?;
        }
        let cap = if self.spot { "spot" } else { "on-demand" };
        write!(f, " {} ({cap})", self.instance_type)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cloud_round_trips() {
        for c in Cloud::ALL {
            assert_eq!(c.as_str().parse::<Cloud>().unwrap(), c);
            assert_eq!(c.to_string().to_uppercase().parse::<Cloud>().unwrap(), c);
        }
        assert_eq!("google".parse::<Cloud>().unwrap(), Cloud::Gcp);
        let e = "oracle".parse::<Cloud>().unwrap_err();
        assert!(e.to_string().contains("valid: aws"), "{e}");
    }

    fn offer(count: Option<f64>, mem: Option<f64>) -> Offer {
        Offer {
            cloud: Cloud::Aws,
            region: "us-east-1".into(),
            zone: None,
            instance_type: "g6.xlarge".into(),
            gpu: crate::gpu::lookup("L4").unwrap(),
            gpu_count: count,
            gpu_memory_gib: mem,
            vcpus: None,
            memory_gib: None,
            on_demand_usd_per_hour: Some(1.0),
            spot_usd_per_hour: None,
            source: String::new(),
            on_demand_origin: PriceOrigin::new("s", Some("2026-07-20".into())),
            spot_origin: PriceOrigin::default(),
        }
    }

    #[test]
    fn price_age() {
        let o = offer(Some(1.0), None);
        let today = crate::time::days_of_date("2026-12-03").unwrap();
        assert_eq!(o.origin(false).age_days(today), Some(136));
        assert_eq!(
            o.origin(false).describe_age(today),
            "2026-07-20 (136 days old)"
        );
        assert_eq!(o.origin(true).age_days(today), None);
        assert_eq!(o.origin(true).describe_age(today), "undated");
    }

    #[test]
    fn vram_per_gpu() {
        assert_eq!(offer(Some(1.0), Some(22.35)).vram_per_gpu_gib(), Some(24.0));
        assert_eq!(offer(Some(1.0), None).vram_per_gpu_gib(), Some(24.0));
        assert_eq!(
            offer(Some(0.5), Some(11.18)).vram_per_gpu_gib(),
            Some(11.18)
        );
        assert_eq!(offer(Some(0.5), None).vram_per_gpu_gib(), None);
        assert_eq!(offer(None, None).vram_per_gpu_gib(), None);
    }

    #[test]
    fn key_display() {
        let o = offer(Some(1.0), None);
        assert_eq!(o.key(true).to_string(), "aws/us-east-1 g6.xlarge (spot)");
        assert!(o.has_key(&o.key(false)));
    }
}
