//! The crate edges `docs/ARCHITECTURE.md` promises, checked: the core and
//! the builtin runtime have no I/O dependency, and only the host touches SQLite.

use std::path::Path;

/// The crate names under `[dependencies]` (and target-specific ones) of a
/// manifest, dev-dependencies left out.
fn dependencies(crate_dir: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(crate_dir)
        .join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let manifest: toml::Table = toml::from_str(&text).unwrap();
    let mut names: Vec<String> = Vec::new();
    let mut take = |table: Option<&toml::Value>| {
        if let Some(t) = table.and_then(toml::Value::as_table) {
            names.extend(t.keys().cloned());
        }
    };
    take(manifest.get("dependencies"));
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        for target in targets.values() {
            take(target.get("dependencies"));
        }
    }
    names
}

/// Crates that do I/O (or reach one that does): the pure crates take none.
const IO: &[&str] = &[
    "tokio",
    "reqwest",
    "rusqlite",
    "uuid",
    "humantime",
    "dirs",
    "tempfile",
    "rustix",
    "laika-runtime",
    "laika-host",
];

#[test]
fn the_core_has_no_io_dependency() {
    let deps = dependencies("laika-core");
    assert!(deps.contains(&"serde_json".to_string()), "{deps:?}");
    for io in IO {
        assert!(!deps.iter().any(|d| d == io), "laika-core depends on {io}");
    }
    assert!(!deps.iter().any(|d| d == "laika-builtin"), "{deps:?}");
}

#[test]
fn the_builtin_is_pure_and_built_on_the_core_alone() {
    let deps = dependencies("laika-builtin");
    assert!(deps.contains(&"laika-core".to_string()), "{deps:?}");
    for io in IO {
        assert!(
            !deps.iter().any(|d| d == io),
            "laika-builtin depends on {io}"
        );
    }
}

#[test]
fn only_the_host_touches_sqlite() {
    let deps = dependencies("laika-runtime");
    assert!(deps.contains(&"laika-core".to_string()), "{deps:?}");
    assert!(!deps.iter().any(|d| d == "rusqlite" || d == "laika-host"));
}

#[test]
fn the_protocol_is_a_leaf() {
    let deps = dependencies("laika-protocol");
    let allowed = ["serde", "serde_json", "schemars", "thiserror"];
    for dep in &deps {
        assert!(
            allowed.contains(&dep.as_str()),
            "laika-protocol depends on {dep}: it holds types, their serialization and validation only"
        );
    }
    for user in ["laika-core", "laika-runtime", "laika-host"] {
        assert!(
            dependencies(user).contains(&"laika-protocol".to_string()),
            "{user} does not use laika-protocol"
        );
    }
}
