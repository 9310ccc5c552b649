//! `terraform-provider-gpu`: serves the `gpu` provider when Terraform starts it, and is a
//! small CLI when a person does.

#[macro_use]
mod stdout;
mod catalog_cli;
mod chart;
mod checks;
mod cli;
mod clouds;
mod commitment_cli;
mod config;
mod cost_cli;
mod data_sources;
mod docs;
mod estate_cli;
mod export;
mod functions;
mod json_numbers;
mod live;
mod logging;
mod model_values;
mod offers_cli;
mod placement_cli;
mod plan_cost;
mod provider;
mod report_cli;
mod resources;
mod spend_cli;

use std::process::ExitCode;

/// The provider's registry address, used for `--debug` reattach settings.
pub const PROVIDER_ADDRESS: &str = "registry.terraform.io/gpu-tf/gpu";

fn main() -> ExitCode {
    cli::run()
}
