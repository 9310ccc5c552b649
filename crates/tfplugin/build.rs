//! Build script: compiles the protocol definitions in `<workspace>/proto`
//! into Rust (prost messages + tonic client and server stubs).
//!
//! Uses `protox` (a pure-Rust protobuf compiler), so no system `protoc` is
//! needed; the google/protobuf well-known types ship with protox. Without the `server`
//! feature there is no protocol code to generate.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "server")]
    protocol::generate()?;
    Ok(())
}

#[cfg(feature = "server")]
mod protocol {
    use std::path::PathBuf;

    const PROTOS: &[&str] = &[
        "tfplugin6.proto",
        "grpc_controller.proto",
        "grpc_stdio.proto",
        "grpc_broker.proto",
    ];

    /// Generates the prost messages and tonic stubs of [`PROTOS`] into `OUT_DIR`.
    pub fn generate() -> Result<(), Box<dyn std::error::Error>> {
        let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
        let proto_dir = manifest_dir.join("../../proto");

        println!("cargo:rerun-if-changed={}", proto_dir.display());
        for proto in PROTOS {
            println!("cargo:rerun-if-changed={}", proto_dir.join(proto).display());
        }

        let fds = protox::compile(PROTOS, [&proto_dir])?;

        tonic_prost_build::configure()
            .build_server(true)
            .build_client(true)
            // The workspace builds tonic without its `transport`/`channel`
            // features, so skip the generated `connect()` helpers.
            .build_transport(false)
            .emit_rerun_if_changed(false)
            .compile_fds(fds)?;

        Ok(())
    }
}
