//! Serving a [`Provider`] to Terraform: the go-plugin handshake, AutoMTLS, the gRPC
//! services (provider, health, controller, stdio) and a debug mode for
//! `TF_REATTACH_PROVIDERS`.

pub mod convert;
pub mod grpc;
pub mod handshake;
pub mod tls;

mod controller;

use crate::provider::Provider;
use controller::{Controller, Stdio};
use handshake::{HandshakeConfig, HandshakeError};
use std::io::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Why serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The environment is not Terraform's.
    #[error(transparent)]
    Handshake(#[from] HandshakeError),
    /// TLS setup failed.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// No port in the allowed range could be bound.
    #[error("could not listen on 127.0.0.1 in ports {min}..={max}: {source}")]
    Bind {
        /// Lowest port tried.
        min: u16,
        /// Highest port tried.
        max: u16,
        /// The last bind error.
        source: std::io::Error,
    },
    /// Printing the handshake line or another I/O step failed.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The gRPC server failed.
    #[error("gRPC server: {0}")]
    Transport(String),
}

/// What a debug session prints: where Terraform should reattach.
#[derive(Debug, Clone)]
pub struct DebugSession {
    /// The listening address.
    pub addr: SocketAddr,
    /// The value to export as `TF_REATTACH_PROVIDERS`.
    pub reattach_json: String,
}

async fn bind_in_range(min: u16, max: u16) -> Result<TcpListener, ServeError> {
    let mut last = std::io::Error::other("empty port range");
    for port in min..=max {
        match TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await {
            Ok(l) => return Ok(l),
            Err(e) => last = e,
        }
    }
    Err(ServeError::Bind {
        min,
        max,
        source: last,
    })
}

/// Builds the router of every service the plugin offers.
async fn services<P: Provider>(
    provider: Arc<P>,
    shutdown_tx: watch::Sender<bool>,
) -> tonic::service::Routes {
    use crate::proto::plugin::grpc_controller_server::GrpcControllerServer;
    use crate::proto::plugin::grpc_stdio_server::GrpcStdioServer;
    use crate::proto::tfplugin6::provider_server::ProviderServer;
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_service_status("plugin", tonic_health::ServingStatus::Serving)
        .await;
    let shutdown_rx = shutdown_tx.subscribe();
    let provider_server = ProviderServer::new(grpc::ProviderService::new(provider))
        .max_decoding_message_size(256 * 1024 * 1024)
        .max_encoding_message_size(256 * 1024 * 1024);
    tonic::service::Routes::new(provider_server)
        .add_service(health_service)
        .add_service(GrpcControllerServer::new(Controller::new(shutdown_tx)))
        .add_service(GrpcStdioServer::new(Stdio::new(shutdown_rx)))
}

/// Resolves once a shutdown was asked for (GRPCController.Shutdown).
async fn shutdown_requested(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|stop| *stop).await;
}

/// Ignores Ctrl-C: Terraform forwards the user's interrupt to the whole process group and
/// then asks the provider to stop through `StopProvider`; dying here would lose state.
fn ignore_interrupts() {
    tokio::spawn(async {
        while tokio::signal::ctrl_c().await.is_ok() {
            tracing::info!("interrupt received; waiting for Terraform to stop the provider");
        }
    });
}

/// Serves `provider` to the Terraform that launched this process: checks the handshake
/// environment, prints the handshake line, and serves until Terraform shuts it down.
pub async fn serve<P: Provider>(provider: P) -> Result<(), ServeError> {
    let config = HandshakeConfig::from_env()?;
    let identity = tls::ServerIdentity::generate()?;
    let tls_config = Arc::new(tls::server_config(&identity, &config.client_cert_pem)?);
    let listener = bind_in_range(config.min_port, config.max_port).await?;
    let addr = listener.local_addr()?;

    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let routes = services(Arc::new(provider), shutdown_tx).await;
    let incoming = tls_incoming(listener, tls_config);

    {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "{}",
            handshake::handshake_line(addr, &identity.cert_der)
        )?;
        out.flush()?;
    }
    ignore_interrupts();
    run(routes, incoming, shutdown_rx).await
}

/// Serves `provider` without Terraform starting it, for debugging: plain gRPC on a
/// loopback port. `on_ready` receives the reattach settings to show the user.
pub async fn serve_debug<P: Provider>(
    provider: P,
    provider_address: &str,
    on_ready: impl FnOnce(&DebugSession),
) -> Result<(), ServeError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let addr = listener.local_addr()?;
    let reattach = serde_json::json!({
        provider_address: {
            "Protocol": "grpc",
            "ProtocolVersion": handshake::APP_PROTOCOL_VERSION,
            "Pid": std::process::id(),
            "Test": true,
            "Addr": { "Network": "tcp", "String": addr.to_string() }
        }
    });
    let session = DebugSession {
        addr,
        reattach_json: reattach.to_string(),
    };
    on_ready(&session);
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let routes = services(Arc::new(provider), shutdown_tx).await;
    let incoming = tokio_stream::StreamExt::map(
        tokio_stream::wrappers::TcpListenerStream::new(listener),
        |conn| {
            conn.inspect(|tcp| {
                let _ = tcp.set_nodelay(true);
            })
        },
    );
    run(routes, incoming, shutdown_rx).await
}

async fn run<S, IO, E>(
    routes: tonic::service::Routes,
    incoming: S,
    shutdown_rx: watch::Receiver<bool>,
) -> Result<(), ServeError>
where
    S: tokio_stream::Stream<Item = Result<IO, E>> + Send + 'static,
    IO: tokio::io::AsyncRead
        + tokio::io::AsyncWrite
        + tonic::transport::server::Connected
        + Unpin
        + Send
        + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let server = tonic::transport::Server::builder()
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, shutdown_requested(shutdown_rx.clone()));
    // After a shutdown request, give open streams a moment to close, then stop regardless.
    let deadline = async move {
        shutdown_requested(shutdown_rx).await;
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    };
    tokio::select! {
        r = server => r.map_err(|e| ServeError::Transport(e.to_string())),
        () = deadline => Ok(()),
    }
}

/// Accepts TCP connections and completes the TLS handshake of each in its own task, so a
/// client that stalls (or is refused) cannot hold up the others.
fn tls_incoming(
    listener: TcpListener,
    config: Arc<rustls::ServerConfig>,
) -> impl tokio_stream::Stream<
    Item = Result<tokio_rustls::server::TlsStream<tokio::net::TcpStream>, std::io::Error>,
> {
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        loop {
            let (tcp, peer) = match listener.accept().await {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    continue;
                }
            };
            // Small request/response messages: without NODELAY, Nagle and delayed ACKs
            // add ~40 ms to every other RPC.
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("set_nodelay: {e}");
            }
            let acceptor = acceptor.clone();
            let tx = tx.clone();
            tokio::spawn(async move {
                let handshake =
                    tokio::time::timeout(std::time::Duration::from_secs(10), acceptor.accept(tcp))
                        .await;
                match handshake {
                    Ok(Ok(stream)) => {
                        let _ = tx.send(Ok(stream)).await;
                    }
                    Ok(Err(e)) => tracing::warn!(%peer, "refused TLS client: {e}"),
                    Err(_) => tracing::warn!(%peer, "TLS handshake timed out"),
                }
            });
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}
