//! The price list parser's memory does not grow with the file (run with `--ignored`).

use std::collections::BTreeSet;
use std::io::Read;

use gpu_core::catalog::live::aws_price_list::parse;

/// A synthetic price list of `n` non-GPU products (and their terms) plus one GPU product,
/// generated while it is read.
struct Synthetic {
    n: usize,
    i: usize,
    phase: u8,
    buf: Vec<u8>,
    pos: usize,
}

impl Synthetic {
    fn refill(&mut self) {
        self.buf.clear();
        self.pos = 0;
        let s = match self.phase {
            0 => {
                self.phase = 1;
                "{\"formatVersion\":\"v1.0\",\"publicationDate\":\"2026-12-01T00:00:00Z\",\"products\":{\"GPU\":{\"sku\":\"GPU\",\"attributes\":{\"instanceType\":\"p5.48xlarge\",\"operatingSystem\":\"Linux\",\"tenancy\":\"Shared\",\"preInstalledSw\":\"NA\",\"capacitystatus\":\"Used\"}}".to_string()
            }
            1 if self.i < self.n => {
                self.i += 1;
                format!(
                    ",\"SKU{0}\":{{\"sku\":\"SKU{0}\",\"productFamily\":\"Compute Instance\",\"attributes\":{{\"instanceType\":\"m5.large\",\"operatingSystem\":\"Linux\",\"tenancy\":\"Shared\",\"preInstalledSw\":\"NA\",\"capacitystatus\":\"Used\",\"location\":\"US East (N. Virginia)\",\"usagetype\":\"BoxUsage:m5.large\"}}}}",
                    self.i
                )
            }
            1 => {
                self.phase = 2;
                self.i = 0;
                "},\"terms\":{\"OnDemand\":{\"GPU\":{\"GPU.T\":{\"priceDimensions\":{\"GPU.T.R\":{\"unit\":\"Hrs\",\"pricePerUnit\":{\"USD\":\"55.04\"}}}}}".to_string()
            }
            2 if self.i < self.n => {
                self.i += 1;
                format!(
                    ",\"SKU{0}\":{{\"SKU{0}.T\":{{\"offerTermCode\":\"T\",\"priceDimensions\":{{\"SKU{0}.T.R\":{{\"unit\":\"Hrs\",\"description\":\"$0.096 per On Demand Linux m5.large Instance Hour\",\"pricePerUnit\":{{\"USD\":\"0.0960000000\"}}}}}}}}}}",
                    self.i
                )
            }
            2 => {
                self.phase = 3;
                "}}}".to_string()
            }
            _ => String::new(),
        };
        self.buf.extend_from_slice(s.as_bytes());
    }
}

impl Read for Synthetic {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.buf.len() {
            self.refill();
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
#[ignore = "parses ~1 GB of generated JSON; run alone with --ignored to see peak RSS"]
fn memory_stays_flat_on_a_big_file() {
    let n = 2_500_000; // ≈ 0.9 GB of products and terms
    let before = peak_rss_kib();
    let types: BTreeSet<String> = ["p5.48xlarge".to_string()].into();
    let reader = std::io::BufReader::new(Synthetic {
        n,
        i: 0,
        phase: 0,
        buf: Vec::new(),
        pos: 0,
    });
    let prices = parse(reader, &types, "us-east-1").unwrap();
    assert_eq!(prices, vec![("p5.48xlarge".to_string(), 55.04)]);
    let after = peak_rss_kib();
    eprintln!("peak RSS {before} KiB → {after} KiB");
    assert!(
        after.saturating_sub(before) < 64 * 1024,
        "grew {} KiB",
        after - before
    );
}
