//! Command line: with no command and Terraform's environment it serves the plugin;
//! `--debug` serves a debugging session; subcommands are for people.

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use tfplugin::server::{self, ServeError, handshake::HandshakeError};

/// Terraform/OpenTofu provider for GPU capacity on AWS, Azure and Google Cloud.
///
/// Terraform starts this binary itself; run by hand it offers the commands below.
#[derive(Debug, Parser)]
#[command(name = "terraform-provider-gpu", version, about, long_about)]
struct Cli {
    /// Serve a debugging session and print the TF_REATTACH_PROVIDERS value to export.
    #[arg(long)]
    debug: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the GPU models the provider knows, with memory and architecture.
    Models {
        /// Only models with at least this much memory per GPU (GiB).
        #[arg(long)]
        min_memory_gib: Option<f64>,
    },
    /// Rank GPU offers across clouds (the same answer as the `gpu_offers` data source).
    Offers(crate::offers_cli::OffersArgs),
    /// Rebuild the offer catalog from the live price sources (needs internet; `make
    /// catalog`): every price a source answers is dated today, the rest keep the
    /// snapshot's date or stay undated. Writes the CSV and a PROVENANCE.md next to it.
    Catalog(crate::catalog_cli::CatalogArgs),
    /// Size a commitment to a demand history (the `gpu_commitment_sizing` answer): the
    /// floor and the optimum with their money, and the cost curve as an SVG chart.
    CommitmentSize(crate::commitment_cli::CommitmentArgs),
    /// Bring back the GPU VMs (`gpu_instance`) a spot reclaim stopped: one JSON line per
    /// event, a summary at exit. Never deletes anything, never starts a VM a person stopped.
    Watch(gpu_operator::watch::WatchArgs),
    /// The monthly cost of a plan's GPU resources before and after it, the change, and
    /// the totals by team, project and cloud (`terraform show -json tfplan > plan.json`).
    Cost(crate::cost_cli::CostArgs),
    /// Reports over events files: `time-to-gpu` (p50/p90/max seconds from a GPU request
    /// to GPUs ready, by cloud, region and GPU) and `capacity` (the clouds' stockout, quota
    /// and not-offered answers by day and place).
    #[command(subcommand)]
    Report(crate::report_cli::ReportCommand),
    /// Write what the inventory finds (the `report spend` filters) as configuration to
    /// apply: `import` blocks and resources in the provider's attributes (`--format
    /// terraform`), or the same objects as `yaml` or `json`. Read-only.
    Export(Box<crate::export::ExportArgs>),
    /// Print a shell completion script: `completions bash > /etc/bash_completion.d/…`,
    /// `completions zsh > "${fpath[1]}/_terraform-provider-gpu"`, `completions fish`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Regenerate the registry docs under docs/ from the provider schema.
    Docs {
        /// The repository root (where docs/ and examples/ are).
        #[arg(long, default_value = ".")]
        dir: std::path::PathBuf,
        /// Only report stale pages; exit 1 if any.
        #[arg(long)]
        check: bool,
    },
}

/// Parses the command line and runs it.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Models { min_memory_gib }) => {
            crate::data_sources::gpu_models::print_table(min_memory_gib);
            ExitCode::SUCCESS
        }
        Some(Command::Offers(args)) => {
            crate::offers_cli::run(&args, gpu_core::catalog::Catalog::embedded())
        }
        Some(Command::Catalog(args)) => crate::catalog_cli::run(&args),
        Some(Command::CommitmentSize(args)) => crate::commitment_cli::run(&args),
        Some(Command::Watch(args)) => gpu_operator::watch::run(&args),
        Some(Command::Report(command)) => crate::report_cli::run(&command),
        Some(Command::Cost(args)) => crate::cost_cli::run(&args),
        Some(Command::Export(args)) => crate::export::run(&args),
        Some(Command::Completions { shell }) => {
            use clap::CommandFactory;
            let mut command = Cli::command();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "terraform-provider-gpu", &mut script);
            out!("{}", String::from_utf8_lossy(&script));
            ExitCode::SUCCESS
        }
        Some(Command::Docs { dir, check }) => match crate::docs::write_or_check(&dir, check) {
            Ok(changed) if check && !changed.is_empty() => {
                eprintln!("stale docs: {changed:?}; run `make docs`");
                ExitCode::FAILURE
            }
            Ok(changed) => {
                for p in changed {
                    outln!("wrote {}", p.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("terraform-provider-gpu docs: {e}");
                ExitCode::FAILURE
            }
        },
        None => serve(cli.debug),
    }
}

fn serve(debug: bool) -> ExitCode {
    crate::logging::init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("terraform-provider-gpu: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        if debug {
            server::serve_debug(crate::provider::new(), crate::PROVIDER_ADDRESS, |s| {
                outln!("Provider serving for debugging. In another shell, run:\n");
                outln!("    export TF_REATTACH_PROVIDERS='{}'\n", s.reattach_json);
                outln!("then run Terraform there. Stop this process with Ctrl-C twice or kill.");
            })
            .await
        } else {
            server::serve(crate::provider::new()).await
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(ServeError::Handshake(HandshakeError::NotLaunchedByTerraform)) => {
            eprintln!(
                "terraform-provider-gpu {}\n\n\
                 This is a Terraform provider plugin: Terraform (or OpenTofu) starts it when a\n\
                 configuration uses the `gpu` provider (source \"gpu-tf/gpu\"). It does nothing\n\
                 useful run by hand like this.\n\n\
                 Run `terraform-provider-gpu --help` for the commands it offers people.",
                env!("CARGO_PKG_VERSION")
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("terraform-provider-gpu: {e}");
            ExitCode::FAILURE
        }
    }
}
