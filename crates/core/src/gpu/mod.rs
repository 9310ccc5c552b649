//! GPU models: the registry of models the library knows, their VRAM and generation, and the
//! aliases clouds and catalogs use for them.
//!
//! [`lookup`] resolves a user's or a cloud's spelling to one [`GpuModel`]: matching is
//! case-insensitive and ignores `-`, `_` and spaces; an input that could mean several models
//! (`A100`) is an error listing them, never a guess.

mod lookup;
mod registry;

use std::fmt;

pub use lookup::{GpuLookupError, lookup, normalize};

/// Who makes the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Vendor {
    /// NVIDIA.
    Nvidia,
    /// AMD (Instinct and Radeon Pro).
    Amd,
}

impl Vendor {
    /// The lower-case name: `nvidia`, `amd`.
    pub fn as_str(self) -> &'static str {
        match self {
            Vendor::Nvidia => "nvidia",
            Vendor::Amd => "amd",
        }
    }
}

impl fmt::Display for Vendor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The GPU architecture (generation) a model belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Architecture {
    /// NVIDIA Kepler (2012: K80, K520).
    Kepler,
    /// NVIDIA Maxwell (2015: M60).
    Maxwell,
    /// NVIDIA Pascal (2016: P100, P4).
    Pascal,
    /// NVIDIA Volta (2017: V100).
    Volta,
    /// NVIDIA Turing (2018: T4).
    Turing,
    /// NVIDIA Ampere (2020: A100, A10, A10G, A40, RTX A5000/A6000).
    Ampere,
    /// NVIDIA Ada Lovelace (2022: L4, L40, L40S, RTX 6000 Ada).
    AdaLovelace,
    /// NVIDIA Hopper (2022: H100, H200).
    Hopper,
    /// NVIDIA Blackwell (2024: B200, B300, GB200, GB300, RTX PRO).
    Blackwell,
    /// AMD GCN 5 / Vega (MI25).
    Vega,
    /// AMD RDNA (Radeon Pro V520).
    Rdna,
    /// AMD RDNA 2 (Radeon Pro V620).
    Rdna2,
    /// AMD RDNA 3 (Radeon Pro V710).
    Rdna3,
    /// AMD CDNA 2 (MI250X).
    Cdna2,
    /// AMD CDNA 3 (MI300X, MI325X).
    Cdna3,
    /// AMD CDNA 4 (MI355X).
    Cdna4,
}

impl Architecture {
    /// The architecture's usual name, e.g. `Ada Lovelace`, `CDNA3`.
    pub fn as_str(self) -> &'static str {
        match self {
            Architecture::Kepler => "Kepler",
            Architecture::Maxwell => "Maxwell",
            Architecture::Pascal => "Pascal",
            Architecture::Volta => "Volta",
            Architecture::Turing => "Turing",
            Architecture::Ampere => "Ampere",
            Architecture::AdaLovelace => "Ada Lovelace",
            Architecture::Hopper => "Hopper",
            Architecture::Blackwell => "Blackwell",
            Architecture::Vega => "Vega",
            Architecture::Rdna => "RDNA",
            Architecture::Rdna2 => "RDNA2",
            Architecture::Rdna3 => "RDNA3",
            Architecture::Cdna2 => "CDNA2",
            Architecture::Cdna3 => "CDNA3",
            Architecture::Cdna4 => "CDNA4",
        }
    }
}

impl fmt::Display for Architecture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One GPU model: its canonical name (as in the offer data's `gpu_model` column), maker,
/// nominal memory, architecture and the other names it goes by.
#[derive(Debug, PartialEq)]
pub struct GpuModel {
    /// Canonical name, e.g. `H100`, `A100-80GB`, `RTXPRO6000`.
    pub name: &'static str,
    /// Who makes it.
    pub vendor: Vendor,
    /// Nominal memory of one whole GPU in GiB (vendor's GB taken as GiB; clouds may report
    /// slightly less usable memory, e.g. EC2's 22.35 GiB for a 24 GB L4).
    pub vram_gib: f64,
    /// Architecture / generation.
    pub architecture: Architecture,
    /// A one-line human description, e.g. `NVIDIA H100 SXM 80GB HBM3`.
    pub description: &'static str,
    /// Other spellings used by clouds, catalogs and people (matched like the name).
    pub aliases: &'static [&'static str],
}

impl GpuModel {
    /// Whether `input` names this model exactly (canonical name or an alias, compared after
    /// [`normalize`]).
    pub fn is_named(&self, input: &str) -> bool {
        let n = normalize(input);
        self.names().any(|name| normalize(name) == n)
    }

    /// The canonical name followed by every alias.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }
}

impl fmt::Display for GpuModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The GKE accelerator type (`acceleratorType`, the `cloud.google.com/gke-accelerator`
/// label) of `model` on machine type `machine`: its `nvidia-` alias, the `-mega-` one on
/// A3 Mega machines (`a3-megagpu-8g`: `nvidia-h100-mega-80gb`); `None` when GKE has none.
pub fn gke_accelerator(model: &GpuModel, machine: &str) -> Option<&'static str> {
    let mega = machine.to_ascii_lowercase().starts_with("a3-mega");
    model
        .aliases
        .iter()
        .copied()
        .find(|a| a.starts_with("nvidia-") && a.contains("-mega-") == mega)
}

/// Every model in the registry, in a fixed order (NVIDIA by generation, then AMD).
pub fn all() -> &'static [GpuModel] {
    registry::MODELS
}

#[cfg(test)]
mod tests;
