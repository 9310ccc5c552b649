//! `terraform-provider-gpu export`: what the inventory finds (same filters and accounts as
//! `report spend`), written as configuration a person can apply: Terraform (`import`
//! blocks and resources in the provider's own attributes) or the same objects as YAML or
//! JSON. Each resource is taken through the provider's own import and read, so the
//! configuration is what `terraform import` would leave in state: applying it adopts the
//! estate with an empty plan after. Read-only.

pub mod adopt;
pub mod config_body;
pub mod document;
pub mod terraform;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::estate_cli::{self, EstateArgs};
use config_body::ConfigBody;

/// What `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// `import` blocks and `resource` blocks (Terraform 1.5 and later).
    Terraform,
    /// The same resources as YAML.
    Yaml,
    /// The same resources as JSON.
    Json,
}

/// The flags of `export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// What to read and with which accounts.
    #[command(flatten)]
    estate: EstateArgs,
    /// `terraform` (default), `yaml` or `json`.
    #[arg(long, value_enum, default_value_t = ExportFormat::Terraform)]
    format: ExportFormat,
    /// Write to this file instead of standard output.
    #[arg(long, short)]
    out: Option<PathBuf>,
}

/// The provider block the flags describe: the account settings, never a credential.
fn provider_body(a: &EstateArgs) -> ConfigBody {
    let text = |s: &Option<String>| s.as_ref().map(|v| serde_json::json!(v));
    let block = |pairs: Vec<(&str, Option<serde_json::Value>)>| ConfigBody {
        attributes: pairs
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_string(), v?)))
            .collect(),
        blocks: Vec::new(),
    };
    let mut body = ConfigBody::default();
    let endpoints = a.aws_endpoint_map().unwrap_or_default();
    let aws = block(vec![
        ("profile", text(&a.aws_profile)),
        (
            "endpoints",
            (!endpoints.is_empty()).then(|| serde_json::json!(endpoints)),
        ),
    ]);
    if !aws.attributes.is_empty() {
        body.blocks.push(("aws".into(), aws));
    }
    if a.azure_subscription.is_some() {
        body.blocks.push((
            "azure".into(),
            block(vec![
                ("subscription_id", text(&a.azure_subscription)),
                ("tenant_id", text(&a.azure_tenant)),
                ("endpoint", text(&a.azure_endpoint)),
            ]),
        ));
    }
    if a.gcp_project.is_some() {
        body.blocks.push((
            "gcp".into(),
            block(vec![
                ("project", text(&a.gcp_project)),
                ("endpoint", text(&a.gcp_endpoint)),
            ]),
        ));
    }
    body
}

/// The comment at the top of the Terraform form.
fn header(count: usize) -> String {
    format!(
        "Written by `terraform-provider-gpu export` {} on {}.\n\
         {count} resources, each with the `import` block that adopts it (Terraform 1.5 or later).\n\
         `terraform plan` should show \"{count} to import, 0 to add, 0 to change, 0 to destroy\".\n\
         What runs is in the clouds and, once applied, in your state: nothing is kept anywhere else.",
        env!("CARGO_PKG_VERSION"),
        gpu_core::time::format_rfc3339(gpu_core::time::unix_now() as i64),
    )
}

/// Runs `export`; exit 1 on bad flags or an unwritable `--out`, else 0 (what cannot be
/// read or exported is said on standard error and in the output).
pub fn run(a: &ExportArgs) -> ExitCode {
    const COMMAND: &str = "export";
    let (config, runtime) = match estate_cli::config_of(&a.estate, COMMAND)
        .and_then(|c| Ok((c, estate_cli::runtime(COMMAND)?)))
    {
        Ok(both) => both,
        Err(code) => return code,
    };
    // One provider for the listing and the adoption: the credentials are loaded once.
    let router = crate::provider::configured_with(config);
    let clouds = router.provider().clouds();
    let adopted = runtime.block_on(async {
        let found = estate_cli::list_with(&a.estate, &[], &clouds, COMMAND).await?;
        Ok::<_, ExitCode>(adopt::adopt(&router, &found.items).await)
    });
    let (resources, left) = match adopted {
        Ok(both) => both,
        Err(code) => return code,
    };
    for l in &left {
        eprintln!("not exported: {}: {}", l.what, l.why);
    }
    let provider = provider_body(&a.estate);
    let text = match a.format {
        ExportFormat::Terraform => {
            terraform::file(&header(resources.len()), &provider, &resources, &left)
        }
        ExportFormat::Yaml | ExportFormat::Json => {
            use tfplugin::Provider as _;
            let schemas = router.schemas();
            let configs = resources
                .iter()
                .map(|r| match schemas.resources.get(&r.type_name) {
                    Some(s) => r.body.to_json(&s.block),
                    None => serde_json::Value::Null,
                })
                .collect();
            let doc = document::Document::new(
                provider.to_json(&schemas.provider.block),
                &resources,
                configs,
                &left,
            );
            if a.format == ExportFormat::Json {
                doc.json()
            } else {
                doc.yaml()
            }
        }
    };
    match &a.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, text) {
                return estate_cli::fail(COMMAND, format!("--out {}: {e}", path.display()));
            }
            eprintln!(
                "exported {} resources to {} ({} not exported)",
                resources.len(),
                path.display(),
                left.len()
            );
        }
        None => out!("{text}"),
    }
    ExitCode::SUCCESS
}
