//! Every input under `fuzz/regressions/<target>/` goes through the fuzz target's entry
//! point on each `cargo test`, so a crash libFuzzer once found stays fixed: copy its
//! artifact (`fuzz/artifacts/<target>/crash-*`) into that directory. The directories also
//! hold hand-written edge cases (truncation, absurd lengths, deep nesting, bad UTF-8) and
//! seed `make fuzz`/`make fuzz-short`.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The fuzz targets: the `[[bin]]` names of `fuzz/Cargo.toml`.
fn targets() -> Vec<String> {
    let manifest = fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    let mut names = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin && let Some(rest) = line.strip_prefix("name") {
            let value = rest.trim_start().trim_start_matches('=').trim();
            names.push(value.trim_matches('"').to_string());
        }
    }
    names
}

fn entry_point(target: &str) -> fn(&[u8]) {
    match target {
        "msgpack_decode" => tfplugin::value::fuzz_decode_msgpack,
        "json_decode" => tfplugin::value::fuzz_decode_json,
        other => panic!("fuzz target {other} has no entry point in this test: add it"),
    }
}

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join("regressions").join(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (every fuzz target needs one)", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_fuzz_target_has_a_regression_directory() {
    let targets = targets();
    assert!(
        targets.contains(&"msgpack_decode".to_string())
            && targets.contains(&"json_decode".to_string()),
        "{targets:?}"
    );
    for target in &targets {
        entry_point(target);
        assert!(
            !inputs(target).is_empty(),
            "no regression inputs for {target}"
        );
    }
}

#[test]
fn regression_inputs_never_panic() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for target in targets() {
        let run = entry_point(&target);
        for path in inputs(&target) {
            let data = fs::read(&path).expect("readable input");
            ran += 1;
            if catch_unwind(AssertUnwindSafe(|| run(&data))).is_err() {
                failures.push(format!("{target}: {}", path.display()));
            }
            // Every input through the other decoder as well: cheap, and a msgpack crash
            // input is often interesting JSON and vice versa.
            if catch_unwind(AssertUnwindSafe(|| tfplugin::value::fuzz_decode_all(&data))).is_err() {
                failures.push(format!("both decoders: {}", path.display()));
            }
        }
    }
    assert!(ran > 0);
    assert!(failures.is_empty(), "panicked on:\n{}", failures.join("\n"));
}
