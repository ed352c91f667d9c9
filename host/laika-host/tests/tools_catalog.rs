//! `docs/tools.json` is the tool registry (`laika_core::tools`) as the
//! extension's build reads it: this test fails when the committed file is
//! stale. Rewrite it with
//!
//!     LAIKA_BLESS=1 cargo test -p laika-host --test tools_catalog
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use std::path::Path;

#[test]
fn docs_tools_json_matches_the_registry() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tools.json");
    let rendered = format!(
        "{}\n",
        serde_json::to_string_pretty(&laika_core::tools::catalog()).unwrap()
    );
    if std::env::var_os("LAIKA_BLESS").is_some() {
        std::fs::write(&path, &rendered).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == rendered,
        "docs/tools.json is stale; rewrite it with: LAIKA_BLESS=1 cargo test -p laika-host --test tools_catalog"
    );
}
