//! A blocking [`std::io::Read`] over chunks sent from an async task, so a synchronous
//! streaming parser (serde_json) can consume an HTTP body on a blocking thread. The
//! channel is bounded: the download waits while the parser is behind, so at most
//! `capacity` chunks are in memory.

use std::io::{self, Read};

use tokio::sync::mpsc;

/// A chunk of body, or the error that ended the body.
pub type Chunk = io::Result<Vec<u8>>;

/// The reading end.
#[derive(Debug)]
pub struct ChannelReader {
    rx: mpsc::Receiver<Chunk>,
    buf: Vec<u8>,
    pos: usize,
}

/// A bounded channel of `capacity` chunks: the async sender and the blocking reader.
pub fn channel(capacity: usize) -> (mpsc::Sender<Chunk>, ChannelReader) {
    let (tx, rx) = mpsc::channel(capacity.max(1));
    (
        tx,
        ChannelReader {
            rx,
            buf: Vec::new(),
            pos: 0,
        },
    )
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos >= self.buf.len() {
            // Must run outside the async runtime's worker threads (spawn_blocking).
            match self.rx.blocking_recv() {
                Some(Ok(chunk)) => {
                    self.buf = chunk;
                    self.pos = 0;
                }
                Some(Err(e)) => return Err(e),
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
