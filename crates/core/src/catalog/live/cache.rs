//! The on-disk price cache: one JSON file per source and scope, each stamped with the
//! time it was fetched and a fingerprint of the question asked, written atomically
//! (temporary file in the same directory, then rename).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::quote::Fetched;

/// Bump when the file layout changes: older files are then ignored.
pub const FORMAT: u32 = 1;

/// One cache file's content.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheEntry {
    /// [`FORMAT`] at write time.
    pub format: u32,
    /// Source id (`azure-retail-prices` …).
    pub source: String,
    /// Scope within the source (a region, or `all`).
    pub scope: String,
    /// Fingerprint of the request (instance types asked for …); a mismatch is a miss.
    pub fingerprint: String,
    /// When it was fetched, unix seconds.
    pub fetched_at: u64,
    /// The prices and page count.
    pub fetched: Fetched,
}

/// A directory of cache files.
#[derive(Debug, Clone)]
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: &Path) -> Self {
        DiskCache {
            dir: dir.to_path_buf(),
        }
    }

    /// The file of `source` + `scope`.
    pub fn path(&self, source: &str, scope: &str) -> PathBuf {
        self.dir
            .join(format!("{}--{}.json", sanitize(source), sanitize(scope)))
    }

    /// The entry of `source` + `scope` if present, readable and for `fingerprint`.
    pub fn load(&self, source: &str, scope: &str, fingerprint: &str) -> Option<CacheEntry> {
        let text = fs::read(self.path(source, scope)).ok()?;
        let entry: CacheEntry = serde_json::from_slice(&text).ok()?;
        (entry.format == FORMAT
            && entry.source == source
            && entry.scope == scope
            && entry.fingerprint == fingerprint)
            .then_some(entry)
    }

    /// Writes an entry atomically: readers see the old file or the new one, never half.
    pub fn store(&self, entry: &CacheEntry) -> std::io::Result<()> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        fs::create_dir_all(&self.dir)?;
        let path = self.path(&entry.source, &entry.scope);
        let tmp = self.dir.join(format!(
            ".{}.{}.{}.tmp",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(&serde_json::to_vec(entry)?)?;
            f.sync_all()?;
            fs::rename(&tmp, &path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

/// A file-name-safe form of `s`: ASCII alphanumerics, `-`, `_` and `.`; others become `_`.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A stable 64-bit FNV-1a fingerprint of `parts` (separated, so `ab|c` ≠ `a|bc`), as hex.
pub fn fingerprint<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::live::quote::{PriceKind, Quote};

    #[test]
    fn round_trip_and_mismatch() {
        let dir = std::env::temp_dir().join(format!("gpu-core-cache-{}", std::process::id()));
        let cache = DiskCache::new(&dir);
        let entry = CacheEntry {
            format: FORMAT,
            source: "azure-retail-prices".into(),
            scope: "all".into(),
            fingerprint: fingerprint(["a", "b"]),
            fetched_at: 42,
            fetched: Fetched {
                quotes: vec![Quote {
                    region: "eastus".into(),
                    zone: None,
                    instance_type: "Standard_NC4as_T4_v3".into(),
                    kind: PriceKind::Spot,
                    usd_per_hour: 0.2,
                }],
                pages: 2,
            },
        };
        cache.store(&entry).unwrap();
        let back = cache
            .load("azure-retail-prices", "all", &entry.fingerprint)
            .unwrap();
        assert_eq!(back.fetched, entry.fetched);
        assert_eq!(back.fetched_at, 42);
        assert!(cache.load("azure-retail-prices", "all", "other").is_none());
        assert!(
            cache
                .load("azure-retail-prices", "x", &entry.fingerprint)
                .is_none()
        );
        let leftovers = fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        assert_eq!(leftovers, 0);
        fs::remove_dir_all(&dir).unwrap();
        assert_ne!(fingerprint(["ab", "c"]), fingerprint(["a", "bc"]));
    }
}
