//! `laika-host install` / `uninstall` / `doctor`, run as the built binary with
//! HOME (and PATH, config, data dir) pointing into a temp dir.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_laika-host");
const LAIKA_ORIGIN: &str = "chrome-extension://dkfmchejjpecjdaphalpgmmhifdjhomi/";
const LAIKA_FIREFOX: &str = "laika@laika.dev";
const MANIFEST: &str = "dev.laika.host.json";

/// A fake home with its own PATH (no browser on it unless a test adds one).
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let home = Home {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(home.path().join("bin")).unwrap();
        home
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env("HOME", self.path())
            .env("PATH", self.path().join("bin"))
            .env("LAIKA_CONFIG", self.path().join("laika.toml"))
            .env("LAIKA_DATA_DIR", self.path().join("data"))
            // What listens on this machine's ports is not the test's.
            .env("LAIKA_DISCOVER_PORTS", "");
        for var in [
            "XDG_CONFIG_HOME",
            "LAIKA_RUNTIME",
            "LAIKA_BASE_URL",
            "LAIKA_MODEL",
            "LAIKA_SCRIPT",
            "LAIKA_ALLOWED_ORIGINS",
            "LAIKA_LOG_FULL_LLM",
        ] {
            cmd.env_remove(var);
        }
        cmd.output().unwrap()
    }

    /// Runs and asserts the exit code, returning stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn user_manifests(&self) -> Vec<(&'static str, PathBuf)> {
        let h = self.path();
        vec![
            (
                "chrome",
                h.join(".config/google-chrome/NativeMessagingHosts"),
            ),
            ("chromium", h.join(".config/chromium/NativeMessagingHosts")),
            (
                "edge",
                h.join(".config/microsoft-edge/NativeMessagingHosts"),
            ),
            (
                "brave",
                h.join(".config/BraveSoftware/Brave-Browser/NativeMessagingHosts"),
            ),
            ("vivaldi", h.join(".config/vivaldi/NativeMessagingHosts")),
            ("firefox", h.join(".mozilla/native-messaging-hosts")),
        ]
        .into_iter()
        .map(|(b, d)| (b, d.join(MANIFEST)))
        .collect()
    }
}

fn host_path() -> String {
    std::fs::canonicalize(BIN)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every file under `dir`, relative.
fn files(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out
}

#[test]
fn install_all_writes_each_browsers_manifest_with_the_right_fields() {
    let home = Home::new();
    let extra = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/";
    std::fs::write(
        home.path().join("laika.toml"),
        format!("allowed_origins = [\"{LAIKA_ORIGIN}\", \"{extra}\", \"{LAIKA_FIREFOX}\", \"dev@example.org\"]\n"),
    )
    .unwrap();
    let out = home.ok(&["install", "--browser", "all"]);
    for (browser, path) in home.user_manifests() {
        let m = read_json(&path);
        assert_eq!(m["name"], "dev.laika.host", "{browser}");
        assert_eq!(m["type"], "stdio", "{browser}");
        assert_eq!(m["path"], host_path(), "{browser}");
        assert!(m["description"].as_str().unwrap().contains("Laika"));
        if browser == "firefox" {
            assert_eq!(
                m["allowed_extensions"],
                json!([LAIKA_FIREFOX, "dev@example.org"])
            );
            assert!(m.get("allowed_origins").is_none());
        } else {
            assert_eq!(m["allowed_origins"], json!([LAIKA_ORIGIN, extra]));
            assert!(m.get("allowed_extensions").is_none());
        }
        let line = out
            .lines()
            .find(|l| l.contains(path.to_str().unwrap()))
            .unwrap_or_else(|| panic!("{browser} path not reported:\n{out}"));
        assert!(line.starts_with("wrote"), "{line}");
    }
    assert!(
        out.contains(&format!("Host binary: {}", host_path())),
        "{out}"
    );
    // Nothing but the six manifests was written in the home.
    let written: BTreeSet<PathBuf> = files(home.path())
        .into_iter()
        .filter(|p| !p.starts_with("bin") && !p.starts_with("laika.toml"))
        .collect();
    assert_eq!(written.len(), 6, "{written:?}");
}

#[test]
fn install_is_idempotent_and_uninstall_removes_exactly_what_it_wrote() {
    let home = Home::new();
    // Other hosts' manifests already live in some of these folders.
    let neighbours = [
        home.path()
            .join(".config/chromium/NativeMessagingHosts/org.other.host.json"),
        home.path()
            .join(".mozilla/native-messaging-hosts/org.other.host.json"),
        home.path().join(".config/vivaldi/Preferences"),
    ];
    for n in &neighbours {
        std::fs::create_dir_all(n.parent().unwrap()).unwrap();
        std::fs::write(n, "{\"keep\": true}").unwrap();
    }
    let before = files(home.path());

    home.ok(&["install", "--browser", "all"]);
    let contents: Vec<String> = home
        .user_manifests()
        .iter()
        .map(|(_, p)| std::fs::read_to_string(p).unwrap())
        .collect();
    let again = home.ok(&["install", "--browser", "all"]);
    assert_eq!(
        again.lines().filter(|l| l.starts_with("unchanged")).count(),
        6,
        "{again}"
    );
    assert!(!again.contains("wrote"), "{again}");
    let after: Vec<String> = home
        .user_manifests()
        .iter()
        .map(|(_, p)| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(contents, after);

    // A dry run of uninstall changes nothing.
    let dry = home.ok(&["uninstall", "--dry-run"]);
    assert_eq!(
        dry.lines()
            .filter(|l| l.starts_with("would remove"))
            .count(),
        6,
        "{dry}"
    );
    assert!(home.user_manifests().iter().all(|(_, p)| p.exists()));

    let out = home.ok(&["uninstall"]);
    for (_, path) in home.user_manifests() {
        assert!(!path.exists(), "{} still there", path.display());
        assert!(
            out.lines()
                .any(|l| l.starts_with("removed") && l.contains(path.to_str().unwrap())),
            "{out}"
        );
    }
    assert_eq!(files(home.path()), before);
    for n in &neighbours {
        assert_eq!(std::fs::read_to_string(n).unwrap(), "{\"keep\": true}");
    }
    let twice = home.ok(&["uninstall"]);
    assert!(!twice.contains("removed"), "{twice}");
}

#[test]
fn without_browser_only_the_browsers_found_get_a_manifest() {
    let home = Home::new();
    // Firefox is on PATH; Vivaldi has a profile folder; the others are absent.
    let firefox = home.path().join("bin/firefox");
    std::fs::write(&firefox, "#!/bin/sh\n").unwrap();
    std::fs::create_dir_all(home.path().join(".config/vivaldi")).unwrap();
    let out = home.ok(&["install"]);
    for (browser, path) in home.user_manifests() {
        let expected = matches!(browser, "firefox" | "vivaldi");
        assert_eq!(path.exists(), expected, "{browser}: {out}");
    }

    let empty = Home::new();
    let out = empty.ok(&["install"]);
    assert!(out.contains("No supported browser found"), "{out}");
    assert!(out.contains("--browser"), "{out}");
    assert!(empty.user_manifests().iter().all(|(_, p)| !p.exists()));
}

#[test]
fn dry_run_and_user_data_dir() {
    let home = Home::new();
    let profile = home.path().join("profile");
    let p = profile.to_str().unwrap();
    let out = home.ok(&["install", "--user-data-dir", p, "--dry-run"]);
    let manifest = profile.join("NativeMessagingHosts").join(MANIFEST);
    assert!(
        out.contains(&format!("would write  {}", manifest.display())),
        "{out}"
    );
    assert!(!profile.exists(), "a dry run created {}", profile.display());

    let out = home.ok(&["install", "--user-data-dir", p]);
    assert!(
        out.contains(&format!("wrote        {}", manifest.display())),
        "{out}"
    );
    let m = read_json(&manifest);
    assert_eq!(m["allowed_origins"], json!([LAIKA_ORIGIN]));
    assert_eq!(m["path"], host_path());
    // Only the custom profile: no browser folder was touched.
    assert!(!home.path().join(".config").exists());
    assert!(!home.path().join(".mozilla").exists());

    home.ok(&["uninstall", "--user-data-dir", p]);
    assert!(!manifest.exists());
}

#[test]
fn doctor_passes_on_a_fresh_install_with_a_real_pong() {
    let home = Home::new();
    let profile = home.path().join("profile");
    let p = profile.to_str().unwrap();
    home.ok(&[
        "install",
        "--browser",
        "chromium",
        "firefox",
        "--user-data-dir",
        p,
    ]);
    let out = home.ok(&[
        "doctor",
        "--browser",
        "chromium,firefox",
        "--user-data-dir",
        p,
    ]);
    assert_eq!(
        out.matches("the host answered ping with pong").count(),
        3,
        "{out}"
    );
    assert_eq!(
        out.matches("stdout carries frames only").count(),
        3,
        "{out}"
    );
    assert!(out.contains("runtime \"builtin\": offline"), "{out}");
    assert!(!out.contains('✗'), "{out}");
    assert!(out.contains("All checks passed."), "{out}");

    let json: Value =
        serde_json::from_str(&home.ok(&["doctor", "--json", "--user-data-dir", p])).unwrap();
    assert_eq!(json["ok"], true);
    let checks = json["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["status"] == "pass"), "{json:#}");
    assert!(checks.len() >= 8);
}

#[test]
fn doctor_fails_when_no_manifest_exists() {
    let home = Home::new();
    let out = home.run(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("✗ no browser has a dev.laika.host manifest"),
        "{text}"
    );
    assert!(text.contains("laika-host install --browser all"), "{text}");

    // A browser named on the command line without a manifest fails too.
    let out = home.run(&["doctor", "--browser", "edge"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("laika-host install --browser edge"), "{text}");
}

/// Writes a Chromium manifest into `profile` with `edit` applied, runs doctor
/// on it, and returns (exit code, report text).
fn doctor_on(home: &Home, edit: impl FnOnce(&mut Value)) -> (Option<i32>, String) {
    let profile = home.path().join("profile");
    let p = profile.to_str().unwrap();
    home.ok(&["install", "--user-data-dir", p]);
    let path = profile.join("NativeMessagingHosts").join(MANIFEST);
    let mut manifest = read_json(&path);
    edit(&mut manifest);
    std::fs::write(&path, manifest.to_string()).unwrap();
    let out = home.run(&["doctor", "--user-data-dir", p, "--timeout", "10"]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The `✗` line containing `needle`, and the fix line under it.
fn failure<'a>(report: &'a str, needle: &str) -> (&'a str, &'a str) {
    let lines: Vec<&str> = report.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.contains('✗') && l.contains(needle))
        .unwrap_or_else(|| panic!("no ✗ line with {needle:?} in:\n{report}"));
    let fix = lines.get(i + 1).copied().unwrap_or_default();
    assert!(
        fix.trim_start().starts_with('→'),
        "no fix under the failure:\n{report}"
    );
    (lines[i], fix)
}

#[test]
fn doctor_reports_a_relative_path() {
    let home = Home::new();
    let (code, report) = doctor_on(&home, |m| m["path"] = json!("bin/laika-host"));
    assert_eq!(code, Some(1), "{report}");
    let (_, fix) = failure(&report, "\"bin/laika-host\" is relative");
    assert!(fix.contains("absolute path"), "{fix}");
    // A browser would not launch it, and neither does doctor.
    assert!(!report.contains("pong"), "{report}");
}

#[test]
fn doctor_reports_a_missing_binary() {
    let home = Home::new();
    let gone = home.path().join("moved/laika-host");
    let g = gone.to_str().unwrap().to_string();
    let (code, report) = doctor_on(&home, |m| m["path"] = json!(g));
    assert_eq!(code, Some(1), "{report}");
    let (line, fix) = failure(&report, "no such file");
    assert!(line.contains(&g), "{line}");
    assert!(fix.contains("install"), "{fix}");
}

#[test]
fn doctor_reports_a_wrong_origin() {
    let home = Home::new();
    let other = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/";
    let (code, report) = doctor_on(&home, |m| m["allowed_origins"] = json!([other]));
    assert_eq!(code, Some(1), "{report}");
    let (_, fix) = failure(&report, "does not include Laika");
    assert!(fix.contains(LAIKA_ORIGIN), "{fix}");

    let home = Home::new();
    let (code, report) = doctor_on(&home, |m| {
        m["allowed_origins"] = json!([LAIKA_ORIGIN, "chrome-extension://*/"])
    });
    assert_eq!(code, Some(1), "{report}");
    failure(&report, "malformed entries \"chrome-extension://*/\"");
}

#[test]
fn doctor_reports_a_bad_name() {
    let home = Home::new();
    let (code, report) = doctor_on(&home, |m| m["name"] = json!("Dev.Laika-Host"));
    assert_eq!(code, Some(1), "{report}");
    let (_, fix) = failure(&report, "name \"Dev.Laika-Host\" is invalid");
    assert!(fix.contains("dev.laika.host"), "{fix}");

    let home = Home::new();
    let (code, report) = doctor_on(&home, |m| m["name"] = json!("dev.laika.other"));
    assert_eq!(code, Some(1), "{report}");
    failure(&report, "does not match the file name");
}

#[test]
fn doctor_quotes_junk_printed_to_stdout_before_the_frames() {
    let home = Home::new();
    let wrapper = home.path().join("bin/noisy-host");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho 'Welcome back, Dave! Loading profile...'\nexec '{}' \"$@\"\n",
            host_path()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let w = wrapper.to_str().unwrap().to_string();
    let (code, report) = doctor_on(&home, |m| m["path"] = json!(w));
    assert_eq!(code, Some(1), "{report}");
    let (line, fix) = failure(&report, "stray output on stdout");
    assert!(
        line.contains("\"Welcome back, Dave! Loading profile...\\n\""),
        "{line}"
    );
    assert!(fix.contains("stderr"), "{fix}");
    // The host behind the junk still answered: the report separates the two.
    assert!(
        report.contains("✓ the host answered ping with pong"),
        "{report}"
    );
}

#[test]
fn doctor_reports_a_program_that_never_answers() {
    let home = Home::new();
    let silent = home.path().join("bin/silent");
    std::fs::write(&silent, "#!/bin/sh\necho 'config missing' >&2\nexit 3\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&silent, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let s = silent.to_str().unwrap().to_string();
    let (code, report) = doctor_on(&home, |m| m["path"] = json!(s));
    assert_eq!(code, Some(1), "{report}");
    let (line, fix) = failure(&report, "ended without answering ping");
    assert!(line.contains("config missing"), "{line}");
    assert!(fix.contains("run it by hand"), "{fix}");
}

#[test]
fn doctor_relays_the_hosts_own_refusal() {
    let home = Home::new();
    // The config allows only the Firefox add-on: the host refuses Chromium.
    std::fs::write(
        home.path().join("laika.toml"),
        format!("allowed_origins = [\"{LAIKA_FIREFOX}\"]\n"),
    )
    .unwrap();
    let (code, report) = doctor_on(&home, |_| {});
    assert_eq!(code, Some(1), "{report}");
    let (line, fix) = failure(&report, "answered ping with error ORIGIN_DENIED");
    assert!(line.contains(LAIKA_ORIGIN), "{line}");
    assert!(
        fix.contains("allowed_origins") && fix.contains(LAIKA_ORIGIN),
        "{fix}"
    );
}

#[test]
fn doctor_survives_a_program_that_floods_stdout() {
    let home = Home::new();
    let flood = home.path().join("bin/flood");
    // 4 MiB of text in big writes: more than doctor keeps (2 MiB).
    let big = home.path().join("big.txt");
    std::fs::write(&big, "not a frame\n".repeat(350_000)).unwrap();
    std::fs::write(
        &flood,
        format!("#!/bin/sh\nexec /bin/cat '{}' /dev/stdin\n", big.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&flood, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let f = flood.to_str().unwrap().to_string();
    let started = std::time::Instant::now();
    let (code, report) = doctor_on(&home, |m| m["path"] = json!(f));
    assert_eq!(code, Some(1), "{report}");
    // Bounded: the capture cap ends the wait, not the 10 s timeout.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{report}"
    );
    let (line, _) = failure(&report, "stray output on stdout");
    assert!(line.contains("not a frame\\nnot a frame\\n"), "{line}");
    assert!(
        line.len() < 2000,
        "the quote is not bounded: {} bytes",
        line.len()
    );
    failure(&report, "MiB to stdout without answering ping");
}
