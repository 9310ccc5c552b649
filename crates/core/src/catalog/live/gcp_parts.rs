//! Which Cloud Billing Catalog SKUs price the parts of a Google Cloud GPU machine type,
//! and how a machine's hourly price is composed from them.
//!
//! A machine of the A2 / A2 Ultra / A3 / A3 Mega / G2 / G4 families costs
//! `vCPUs × core SKU + GiB × RAM SKU + GPUs × accelerator SKU`, each SKU matched by its
//! `description` prefix (after an optional `Spot Preemptible `), e.g. `A2 Instance Core
//! running in Americas`, `A2 Instance Ram running in …`, `Nvidia Tesla A100 GPU running
//! in …`, `Nvidia H100 80GB Mega GPU attached to Spot Preemptible VMs running in …`.
//! A price is composed only when all three parts are found; otherwise there is none.

/// A part of a machine's price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    /// Per vCPU-hour.
    Core,
    /// Per GiB-hour.
    Ram,
    /// Per GPU-hour.
    Gpu,
}

/// The SKU description prefixes of one machine family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// Core SKU prefix.
    pub core: &'static str,
    /// RAM SKU prefix.
    pub ram: &'static str,
    /// Accelerator SKU prefixes, most specific first.
    pub gpu: &'static [&'static str],
}

/// (machine type prefix, family) in match order.
const FAMILIES: [(&str, Family); 6] = [
    (
        "a2-ultragpu-",
        Family {
            core: "A2 Instance Core",
            ram: "A2 Instance Ram",
            gpu: &["Nvidia Tesla A100 80GB GPU"],
        },
    ),
    (
        "a2-",
        Family {
            core: "A2 Instance Core",
            ram: "A2 Instance Ram",
            gpu: &["Nvidia Tesla A100 GPU"],
        },
    ),
    (
        "a3-megagpu-",
        Family {
            core: "A3Plus Instance Core",
            ram: "A3Plus Instance Ram",
            gpu: &["Nvidia H100 80GB Mega GPU", "Nvidia H100 80GB Plus GPU"],
        },
    ),
    (
        "a3-highgpu-",
        Family {
            core: "A3 Instance Core",
            ram: "A3 Instance Ram",
            gpu: &["Nvidia H100 80GB GPU"],
        },
    ),
    (
        "g2-",
        Family {
            core: "G2 Instance Core",
            ram: "G2 Instance Ram",
            gpu: &["Nvidia L4 GPU"],
        },
    ),
    (
        "g4-",
        Family {
            core: "G4 Instance Core",
            ram: "G4 Instance Ram",
            gpu: &["RTX 6000 96GB", "Nvidia RTX PRO 6000"],
        },
    ),
];

/// Words that mark SKUs of other purchase models (reservations, DWS, commitments …).
const EXCLUDED: [&str; 7] = [
    "DWS",
    "Calendar Mode",
    "Reserved",
    "Commitment",
    "Flex",
    "Sole Tenancy",
    "Custom",
];

/// The family of a machine type, if it is one this source composes.
pub fn family_of(machine_type: &str) -> Option<&'static Family> {
    FAMILIES
        .iter()
        .find(|(prefix, _)| machine_type.starts_with(prefix))
        .map(|(_, f)| f)
}

/// Every SKU prefix any family uses, with its part.
pub fn all_prefixes() -> impl Iterator<Item = (&'static str, Part)> {
    FAMILIES.iter().flat_map(|(_, f)| {
        [(f.core, Part::Core), (f.ram, Part::Ram)]
            .into_iter()
            .chain(f.gpu.iter().map(|g| (*g, Part::Gpu)))
    })
}

/// The (prefix, part) a SKU description prices, if any: the prefix must be followed by
/// ` running …` or ` attached …`, and no word of another purchase model (`DWS`,
/// `Reserved`, `Commitment` …) may appear.
pub fn match_description(description: &str) -> Option<(&'static str, Part)> {
    if EXCLUDED.iter().any(|w| description.contains(w)) {
        return None;
    }
    let desc = description
        .strip_prefix("Spot Preemptible ")
        .unwrap_or(description);
    all_prefixes().find(|(prefix, _)| {
        desc.strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with(" running") || rest.starts_with(" attached"))
    })
}

/// Unit prices of one region and capacity type, looked up by SKU prefix.
pub trait UnitPrices {
    /// USD per unit-hour of the SKU with `prefix`, if found.
    fn unit(&self, prefix: &str) -> Option<f64>;
}

/// `vcpus × core + memory × ram + gpus × gpu` for `machine_type`, if every part is known.
pub fn compose(
    machine_type: &str,
    vcpus: Option<f64>,
    memory_gib: Option<f64>,
    gpus: Option<f64>,
    prices: &dyn UnitPrices,
) -> Option<f64> {
    let family = family_of(machine_type)?;
    let (vcpus, memory, gpus) = (vcpus?, memory_gib?, gpus?);
    if vcpus <= 0.0 || memory <= 0.0 || gpus <= 0.0 {
        return None;
    }
    let core = prices.unit(family.core)?;
    let ram = prices.unit(family.ram)?;
    let gpu = family.gpu.iter().find_map(|p| prices.unit(p))?;
    Some(vcpus * core + memory * ram + gpus * gpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn matches_descriptions() {
        assert_eq!(
            match_description("A2 Instance Core running in Americas"),
            Some(("A2 Instance Core", Part::Core))
        );
        assert_eq!(
            match_description("Spot Preemptible A3Plus Instance Ram running in Tokyo"),
            Some(("A3Plus Instance Ram", Part::Ram))
        );
        assert_eq!(
            match_description(
                "Nvidia H100 80GB Mega GPU attached to Spot Preemptible VMs running in Tokyo"
            ),
            Some(("Nvidia H100 80GB Mega GPU", Part::Gpu))
        );
        assert_eq!(
            match_description("Nvidia Tesla A100 80GB GPU running in Americas"),
            Some(("Nvidia Tesla A100 80GB GPU", Part::Gpu))
        );
        assert_eq!(match_description("A2 Instance Core DWS running in x"), None);
        assert_eq!(
            match_description("N2 Instance Core running in Americas"),
            None
        );
        assert_eq!(
            match_description("A3 Instance Core Reserved running in x"),
            None
        );
    }

    struct Map(HashMap<&'static str, f64>);
    impl UnitPrices for Map {
        fn unit(&self, prefix: &str) -> Option<f64> {
            self.0.get(prefix).copied()
        }
    }

    #[test]
    fn composes_only_when_complete() {
        let mut m = Map(HashMap::from([
            ("A2 Instance Core", 0.031611),
            ("A2 Instance Ram", 0.004237),
            ("Nvidia Tesla A100 GPU", 2.933908),
        ]));
        let p = compose("a2-highgpu-1g", Some(12.0), Some(85.0), Some(1.0), &m).unwrap();
        assert!((p - 3.673385).abs() < 1e-9, "{p}");
        assert_eq!(
            compose("a2-ultragpu-1g", Some(12.0), Some(170.0), Some(1.0), &m),
            None
        );
        assert_eq!(
            compose("a2-highgpu-1g", Some(12.0), None, Some(1.0), &m),
            None
        );
        m.0.remove("A2 Instance Ram");
        assert_eq!(
            compose("a2-highgpu-1g", Some(12.0), Some(85.0), Some(1.0), &m),
            None
        );
        assert_eq!(
            compose("n2-standard-4", Some(4.0), Some(16.0), Some(1.0), &m),
            None
        );
    }
}
