//! The crate edges `docs/ARCHITECTURE.md` promises, checked: the core and
//! the builtin runtime have no I/O dependency, only the host touches SQLite,
//! the protocol is a leaf, and no crate has an import circle.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use std::collections::{BTreeMap, BTreeSet};
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

/// A crate's modules (path segments from `src/`) and their non-test text,
/// comments dropped. `tests.rs`, `fixtures.rs`, `src/bin/` and a file's
/// trailing `#[cfg(test)]` module are left out: tests may import anything.
fn modules(crate_dir: &str) -> BTreeMap<Vec<String>, String> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<Vec<String>, String>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path != src.join("bin") {
                    walk(&path, src, out);
                }
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !name.ends_with(".rs") || name == "tests.rs" || name == "fixtures.rs" {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut segs: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            if matches!(
                segs.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                segs.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or_default();
            let code: Vec<&str> = code
                .lines()
                .map(|l| l.split("//").next().unwrap_or_default())
                .collect();
            out.insert(segs, code.join("\n"));
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(crate_dir)
        .join("src");
    let mut out = BTreeMap::new();
    walk(&src, &src, &mut out);
    out
}

/// `a::{b, c::{d}}` → `a::b`, `a::c::d`.
fn expand(prefix: &str, list: &str, out: &mut Vec<String>) {
    let mut depth = 0;
    let mut start = 0;
    let mut items = Vec::new();
    for (i, ch) in list.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    for item in items.into_iter().filter(|i| !i.is_empty()) {
        match item.find('{') {
            Some(open) => {
                let close = item.rfind('}').unwrap_or(item.len());
                expand(
                    &format!("{prefix}{}", &item[..open]),
                    &item[open + 1..close],
                    out,
                );
            }
            None => out.push(format!("{prefix}{item}")),
        }
    }
}

/// Every `crate::`/`super::`/`self::` path a module's code names: its `use`
/// items (braces expanded) and paths written inline.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in code.split(';') {
        let squeezed: String = stmt.chars().filter(|c| !c.is_whitespace()).collect();
        if let Some(at) = squeezed.find("use") {
            let rest = &squeezed[at + 3..];
            if ["crate::", "super::", "self::"]
                .iter()
                .any(|p| rest.starts_with(p))
            {
                expand("", rest, &mut out);
            }
        }
    }
    let bytes = code.as_bytes();
    for (at, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
            continue;
        }
        let end = code[at..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .map_or(code.len(), |n| at + n);
        out.push(code[at..end].trim_end_matches(':').to_string());
    }
    out
}

/// The file-level import graph: module → the modules its code names.
fn import_graph(crate_dir: &str) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules = modules(crate_dir);
    let mut graph = BTreeMap::new();
    for (module, code) in &modules {
        let mut targets = BTreeSet::new();
        for path in paths(code) {
            let mut segs = path
                .split("::")
                .map(|s| s.split(" as ").next().unwrap_or(s));
            let mut base: Vec<String> = match segs.next() {
                Some("crate") => Vec::new(),
                Some("super") => module[..module.len().saturating_sub(1)].to_vec(),
                _ => module.clone(),
            };
            let mut target = modules.contains_key(&base).then(|| base.clone());
            for seg in segs {
                if seg == "super" {
                    base.pop();
                    continue;
                }
                base.push(seg.to_string());
                if !modules.contains_key(&base) {
                    break;
                }
                target = Some(base.clone());
            }
            // A module naming itself or one of its parents (its own `mod` items) is no arrow.
            if let Some(t) = target.filter(|t| !module.starts_with(t)) {
                targets.insert(t);
            }
        }
        graph.insert(module.clone(), targets);
    }
    graph
}

/// The strongly connected groups of more than one module (Tarjan).
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'g Vec<String>, (usize, usize)>,
        stack: Vec<&'g Vec<String>>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, node: &'g Vec<String>) -> usize {
            let me = self.index.len();
            self.index.insert(node, (me, me));
            self.stack.push(node);
            let mut low = me;
            for next in &self.graph[node] {
                let seen = self.index.get(next).copied();
                low = match seen {
                    None => low.min(self.visit(next)),
                    Some((i, _)) if self.stack.contains(&next) => low.min(i),
                    Some(_) => low,
                };
            }
            self.index.insert(node, (me, low));
            if low == me {
                let at = self.stack.iter().position(|n| *n == node).unwrap();
                let group: Vec<String> = self.stack.drain(at..).map(|m| m.join("::")).collect();
                if group.len() > 1 {
                    self.found.push(group);
                }
            }
            low
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node) {
            walk.visit(node);
        }
    }
    walk.found
}

#[test]
fn no_crate_has_an_import_circle() {
    for krate in [
        "laika-protocol",
        "laika-core",
        "laika-builtin",
        "laika-runtime",
        "laika-host",
    ] {
        let graph = import_graph(krate);
        assert!(
            graph.len() > 5,
            "{krate}: the module walk found {} modules",
            graph.len()
        );
        let found = circles(&graph);
        assert!(
            found.is_empty(),
            "{krate} has import circles (files that take names from each other): {found:?}"
        );
    }
}

#[test]
fn the_circle_check_sees_a_circle() {
    let graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = [
        (vec!["a".to_string()], [vec!["b".to_string()]].into()),
        (vec!["b".to_string()], [vec!["a".to_string()]].into()),
        (vec!["c".to_string()], [vec!["a".to_string()]].into()),
    ]
    .into();
    assert_eq!(
        circles(&graph),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
    let mut found = Vec::new();
    expand("", "crate::{pack::{Budget,Cut},text}", &mut found);
    assert_eq!(
        found,
        ["crate::pack::Budget", "crate::pack::Cut", "crate::text"]
    );
}
