//! go-plugin's side services: `GRPCController` (Terraform asks the plugin to exit) and
//! `GRPCStdio` (a stream of captured output; ours stays silent, logs go to stderr).

use crate::proto::plugin::grpc_controller_server::GrpcController;
use crate::proto::plugin::grpc_stdio_server::GrpcStdio;
use crate::proto::plugin::{Empty, StdioData};
use std::pin::Pin;
use tokio::sync::watch;
use tonic::{Request, Response, Status};

/// Answers `Shutdown` by flagging the server to stop.
pub struct Controller {
    shutdown: watch::Sender<bool>,
}

impl Controller {
    /// A controller that raises `shutdown`.
    pub fn new(shutdown: watch::Sender<bool>) -> Self {
        Controller { shutdown }
    }
}

#[tonic::async_trait]
impl GrpcController for Controller {
    async fn shutdown(&self, _: Request<Empty>) -> Result<Response<Empty>, Status> {
        tracing::debug!("shutdown requested by Terraform");
        let _ = self.shutdown.send(true);
        Ok(Response::new(Empty {}))
    }
}

/// Serves `StreamStdio` with a stream that sends nothing and ends at shutdown.
pub struct Stdio {
    shutdown: watch::Receiver<bool>,
}

impl Stdio {
    /// A stdio service that closes its streams when `shutdown` turns true.
    pub fn new(shutdown: watch::Receiver<bool>) -> Self {
        Stdio { shutdown }
    }
}

type StdioStream = Pin<Box<dyn futures_util::Stream<Item = Result<StdioData, Status>> + Send>>;

#[tonic::async_trait]
impl GrpcStdio for Stdio {
    type StreamStdioStream = StdioStream;

    async fn stream_stdio(&self, _: Request<()>) -> Result<Response<StdioStream>, Status> {
        let mut rx = self.shutdown.clone();
        let until_shutdown = futures_util::stream::once(async move {
            let _ = rx.wait_for(|stop| *stop).await;
        });
        let silent = futures_util::StreamExt::filter_map(until_shutdown, |()| async { None });
        Ok(Response::new(Box::pin(silent)))
    }
}
