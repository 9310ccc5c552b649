use super::lookup::all_forms;
use super::*;

fn name(input: &str) -> &'static str {
    lookup(input)
        .unwrap_or_else(|e| panic!("{input}: {e}"))
        .name
}

#[test]
fn brief_models_are_registered() {
    for n in [
        "T4",
        "T4G",
        "A10",
        "A10G",
        "L4",
        "L40",
        "L40S",
        "V100",
        "V100-32GB",
        "A100-40GB",
        "A100-80GB",
        "H100",
        "H100-NVL",
        "H200",
        "B200",
        "B300",
        "GB200",
        "GB300",
        "MI300X",
        "RTXPRO6000",
        "RTXPRO4500",
        "K80",
        "M60",
    ] {
        assert_eq!(name(n), n);
    }
    assert_eq!(name("RTX 6000 Ada"), "RTX6000-Ada");
}

#[test]
fn case_and_separators_are_ignored() {
    assert_eq!(name("h100"), "H100");
    assert_eq!(name("a100_80gb"), "A100-80GB");
    assert_eq!(name("A100 80GB"), "A100-80GB");
    assert_eq!(name("a10080GB"), "A100-80GB");
    assert_eq!(name("  l40s "), "L40S");
    assert_eq!(name("RTX-PRO-6000"), "RTXPRO6000");
    assert_eq!(name("h100 nvl"), "H100-NVL");
}

#[test]
fn cloud_and_catalog_aliases() {
    for (alias, want) in [
        ("NVIDIA H100 80GB", "H100"),
        ("H100-SXM", "H100"),
        ("H100 80GB HBM3", "H100"),
        ("nvidia-h100-80gb", "H100"),
        ("nvidia-h100-mega-80gb", "H100"),
        ("nvidia-tesla-a100", "A100-40GB"),
        ("nvidia-a100-80gb", "A100-80GB"),
        ("nvidia-l4", "L4"),
        ("nvidia-tesla-t4", "T4"),
        ("Tesla V100", "V100"),
        ("NVIDIA Tesla T4", "T4"),
        ("AMD Instinct MI300X", "MI300X"),
        ("RTXPRO6000BSE", "RTXPRO6000"),
        ("RTX PRO Server 6000", "RTXPRO6000"),
        ("Radeon Pro V520", "RadeonPro-V520"),
        ("nvidia-h200-141gb", "H200"),
        ("NVIDIA L40S", "L40S"),
    ] {
        assert_eq!(name(alias), want, "{alias}");
    }
}

#[test]
fn exact_canonical_name_beats_longer_names() {
    // H100 is also the start of H100-NVL, A10 of A100-*, L4 of L40/L40S, T4 of T4G.
    assert_eq!(name("H100"), "H100");
    assert_eq!(name("A10"), "A10");
    assert_eq!(name("L4"), "L4");
    assert_eq!(name("T4"), "T4");
    assert_eq!(name("V100"), "V100");
}

#[test]
fn ambiguous_lists_candidates() {
    let err = lookup("A100").unwrap_err();
    match &err {
        GpuLookupError::Ambiguous { candidates, .. } => {
            assert_eq!(candidates, &["A100-40GB", "A100-80GB"])
        }
        other => panic!("{other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("A100-40GB") && msg.contains("A100-80GB"),
        "{msg}"
    );
    assert!(matches!(
        lookup("nvidia a100"),
        Err(GpuLookupError::Ambiguous { .. })
    ));
    match lookup("MI3").unwrap_err() {
        GpuLookupError::Ambiguous { candidates, .. } => {
            assert_eq!(candidates, ["MI300X", "MI325X", "MI355X"])
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_suggests_closest() {
    let err = lookup("H1OO").unwrap_err();
    match &err {
        GpuLookupError::Unknown { closest, .. } => {
            assert_eq!(closest.len(), 3);
            assert!(closest.contains(&"H100"), "{closest:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("unknown GPU model `H1OO`"));
    match lookup("B2OO").unwrap_err() {
        GpuLookupError::Unknown { closest, .. } => assert_eq!(closest[0], "B200"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(lookup(" - "), Err(GpuLookupError::Empty { .. })));
}

#[test]
fn names_do_not_clash_between_models() {
    let mut seen: std::collections::HashMap<&str, &str> = Default::default();
    for (form, model) in all_forms() {
        if let Some(prev) = seen.insert(form.as_str(), model.name) {
            assert_eq!(
                prev, model.name,
                "`{form}` names both {prev} and {}",
                model.name
            );
        }
    }
}

#[test]
fn registry_is_sane() {
    let mut names: Vec<&str> = all().iter().map(|m| m.name).collect();
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n, "duplicate canonical names");
    for m in all() {
        assert!(m.vram_gib > 0.0, "{}", m.name);
        assert!(!m.description.is_empty());
        // every model resolves to itself through every one of its names
        for alias in m.names() {
            assert_eq!(name(alias), m.name, "{alias}");
        }
    }
    assert_eq!(lookup("MI300X").unwrap().vendor, Vendor::Amd);
    assert_eq!(lookup("H200").unwrap().architecture, Architecture::Hopper);
    assert_eq!(lookup("L4").unwrap().architecture.as_str(), "Ada Lovelace");
    assert!(lookup("h100").unwrap().is_named("nvidia-h100-80gb"));
}

#[test]
fn gke_accelerator_types_are_googles_names() {
    // From Google's "GPU machine types" page (cloud.google.com/compute/docs/gpus).
    let gke = |m: &str, machine: &str| gke_accelerator(lookup(m).unwrap(), machine);
    assert_eq!(gke("H100", "a3-highgpu-8g"), Some("nvidia-h100-80gb"));
    assert_eq!(gke("H100", "a3-megagpu-8g"), Some("nvidia-h100-mega-80gb"));
    assert_eq!(gke("A100-80GB", "a2-ultragpu-1g"), Some("nvidia-a100-80gb"));
    assert_eq!(gke("A100-40GB", "a2-highgpu-1g"), Some("nvidia-tesla-a100"));
    assert_eq!(gke("L4", "g2-standard-8"), Some("nvidia-l4"));
    assert_eq!(gke("T4", "n1-standard-8"), Some("nvidia-tesla-t4"));
    assert_eq!(
        gke("A10G", "g5.xlarge"),
        None,
        "an AWS-only GPU has no GKE type"
    );
}
