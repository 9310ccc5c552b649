//! Resolving a spelling to one registry model.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::{GpuModel, all};

/// Every compared form of every name, with its model, built once.
static FORMS: LazyLock<Vec<(String, &'static GpuModel)>> = LazyLock::new(|| {
    all()
        .iter()
        .flat_map(|m| m.names().map(move |n| (normalize(n), m)))
        .collect()
});

/// Exact index over [`FORMS`]; the first model listed wins a (tested-absent) clash.
static EXACT: LazyLock<HashMap<&'static str, &'static GpuModel>> = LazyLock::new(|| {
    let mut map = HashMap::new();
    for (f, m) in FORMS.iter() {
        map.entry(f.as_str()).or_insert(*m);
    }
    map
});

/// Every (form, model) pair the matcher compares, for the registry's own consistency tests.
#[cfg(test)]
pub(super) fn all_forms() -> &'static [(String, &'static GpuModel)] {
    &FORMS
}

/// Words a cloud or a person may put in front of a model name (`NVIDIA Tesla T4`,
/// `AMD Instinct MI300X`); [`lookup`] retries without them.
const VENDOR_WORDS: &[&str] = &["nvidia", "amd", "tesla", "radeon", "instinct"];

/// How many close names an [`GpuLookupError::Unknown`] error suggests.
const SUGGESTIONS: usize = 3;

/// Why a GPU model name did not resolve to exactly one model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuLookupError {
    /// The input was empty or only separators.
    #[error("empty GPU model name; known models: {}", .known.join(", "))]
    Empty {
        /// Every canonical name, for the message.
        known: Vec<&'static str>,
    },
    /// The input is the start of several models' names.
    #[error("GPU model `{input}` is ambiguous: it could be {}; write one of them", .candidates.join(", "))]
    Ambiguous {
        /// What was asked for.
        input: String,
        /// Canonical names of the models it could mean.
        candidates: Vec<&'static str>,
    },
    /// No model has that name.
    #[error("unknown GPU model `{input}`; the closest known names are {}", .closest.join(", "))]
    Unknown {
        /// What was asked for.
        input: String,
        /// Canonical names of the closest models, closest first.
        closest: Vec<&'static str>,
    },
}

/// Lower-cases `input` and drops `-`, `_`, spaces and other separators (`.`, `/`), so
/// `NVIDIA H100 80GB` and `nvidia-h100-80gb` compare equal.
pub fn normalize(input: &str) -> String {
    input
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// `normalized` with leading vendor words (`nvidia`, `tesla`, `amd` …) removed.
fn strip_vendor(normalized: &str) -> &str {
    let mut s = normalized;
    loop {
        match VENDOR_WORDS
            .iter()
            .find(|w| s.len() > w.len() && s.starts_with(*w))
        {
            Some(w) => s = &s[w.len()..],
            None => return s,
        }
    }
}

/// Resolves a GPU model name (canonical name or alias, any case, separators ignored).
///
/// An exact name wins (`H100` is H100, not H100-NVL); otherwise an input that starts several
/// models' names is [`GpuLookupError::Ambiguous`], and anything else
/// [`GpuLookupError::Unknown`] with the closest names.
pub fn lookup(input: &str) -> Result<&'static GpuModel, GpuLookupError> {
    // Registry names are compared as written (normalized); the input is also tried without
    // vendor words, so `NVIDIA L40S` finds `L40S` while `nvidia-tesla-a100` stays an alias.
    let full = normalize(input);
    let stripped = strip_vendor(&full).to_string();
    if full.is_empty() {
        return Err(GpuLookupError::Empty {
            known: all().iter().map(|m| m.name).collect(),
        });
    }
    // 1. exact, as written, then without vendor words
    for wanted in [&full, &stripped] {
        if let Some(m) = EXACT.get(wanted.as_str()) {
            return Ok(m);
        }
    }
    // 2. a prefix of several models' names
    let mut candidates: Vec<&'static str> = Vec::new();
    for (f, m) in FORMS.iter() {
        if f.starts_with(stripped.as_str()) && !candidates.contains(&m.name) {
            candidates.push(m.name);
        }
    }
    if candidates.len() > 1 {
        return Err(GpuLookupError::Ambiguous {
            input: input.to_string(),
            candidates,
        });
    }
    // 3. unknown: the closest names by edit distance (a single prefix match first)
    let mut scored: Vec<(usize, usize, &'static str)> = all()
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let best = if candidates.contains(&m.name) {
                0
            } else {
                m.names()
                    .map(|n| levenshtein(&normalize(n), &stripped))
                    .min()
                    .unwrap_or(usize::MAX)
            };
            (best, i, m.name)
        })
        .collect();
    scored.sort();
    Err(GpuLookupError::Unknown {
        input: input.to_string(),
        closest: scored.iter().take(SUGGESTIONS).map(|s| s.2).collect(),
    })
}

/// Edit distance (insertions, deletions, substitutions) between two strings.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::levenshtein;

    #[test]
    fn levenshtein_basics() {
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("h100", "h100"), 0);
        assert_eq!(levenshtein("h101", "h100"), 1);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }
}
