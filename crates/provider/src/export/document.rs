//! The export as data (JSON or YAML): the same resources as the Terraform form, each with
//! its type, label, import id, where it was found, its configuration and notes, and what
//! was not exported and why.

use serde::Serialize;

use super::adopt::{Exported, Left};
use super::terraform::SOURCE;

/// The whole export.
#[derive(Debug, Serialize)]
pub struct Document {
    /// The provider: `source`, `version` and its settings.
    pub provider: ProviderPart,
    /// One object per resource.
    pub resources: Vec<ResourcePart>,
    /// What was found but not exported.
    pub not_exported: Vec<LeftPart>,
}

/// The provider part.
#[derive(Debug, Serialize)]
pub struct ProviderPart {
    /// Registry source, `gpu-tf/gpu`.
    pub source: &'static str,
    /// The provider's version.
    pub version: &'static str,
    /// The provider block's settings.
    pub config: serde_json::Value,
}

/// One resource.
#[derive(Debug, Serialize)]
pub struct ResourcePart {
    /// Resource type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Label.
    pub name: String,
    /// The id `terraform import` takes.
    pub import_id: String,
    /// Where the inventory found it.
    pub found_at: String,
    /// The configuration, as its attributes and blocks.
    pub config: serde_json::Value,
    /// What the user must still do.
    pub notes: Vec<String>,
}

/// Something not exported.
#[derive(Debug, Serialize)]
pub struct LeftPart {
    /// What it is.
    pub what: String,
    /// Why not.
    pub why: String,
}

impl Document {
    /// The document of `resources` (`config` of each from its schema) and `left`.
    pub fn new(
        provider: serde_json::Value,
        resources: &[Exported],
        configs: Vec<serde_json::Value>,
        left: &[Left],
    ) -> Self {
        Document {
            provider: ProviderPart {
                source: SOURCE,
                version: env!("CARGO_PKG_VERSION"),
                config: provider,
            },
            resources: resources
                .iter()
                .zip(configs)
                .map(|(r, config)| ResourcePart {
                    type_name: r.type_name.clone(),
                    name: r.label.clone(),
                    import_id: r.import_id.clone(),
                    found_at: r.found_at.clone(),
                    config,
                    notes: r.notes.clone(),
                })
                .collect(),
            not_exported: left
                .iter()
                .map(|l| LeftPart {
                    what: l.what.clone(),
                    why: l.why.clone(),
                })
                .collect(),
        }
    }

    /// As pretty JSON, with a final newline.
    pub fn json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// As YAML.
    pub fn yaml(&self) -> String {
        serde_norway::to_string(self).unwrap_or_default()
    }
}
