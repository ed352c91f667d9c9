//! Native-messaging host manifests: where each browser looks for them, what
//! they contain, and writing or removing them (`laika-host install` /
//! `uninstall`).
//!
//! A browser finds the host by reading `<dir>/dev.laika.host.json`, whose
//! `path` is the binary to launch and whose `allowed_origins` (Chromium
//! family) or `allowed_extensions` (Firefox) say which extensions may launch
//! it. The templates in `manifests/` are embedded and filled in here.
//!
//! Invariants:
//! - Every path is computed from an [`Env`] (OS, home, config home, `PATH`),
//!   never read from the process directly, so tests run in a temp dir.
//! - A written manifest always passes the browser's own checks: the name
//!   matches the file name, `path` is absolute, and the allowed list holds
//!   Laika's id plus only well-formed configured entries (one malformed
//!   `allowed_origins` entry makes Chrome reject the whole file).
//! - Files are replaced atomically (temp file + rename); install and
//!   uninstall touch only `dev.laika.host.json`, never other files nor the
//!   folders themselves.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The native-messaging host name the extension connects to.
pub const HOST_NAME: &str = "dev.laika.host";
/// The origin of Laika's Chromium extension (id pinned by
/// `extension/manifest-key.txt`).
pub const LAIKA_CHROMIUM_ORIGIN: &str = "chrome-extension://dkfmchejjpecjdaphalpgmmhifdjhomi/";
/// Laika's Firefox add-on id (`browser_specific_settings.gecko.id`).
pub const LAIKA_FIREFOX_ID: &str = "laika@laika.dev";

const CHROMIUM_TEMPLATE: &str = include_str!("../../../manifests/chromium.json.in");
const FIREFOX_TEMPLATE: &str = include_str!("../../../manifests/firefox.json.in");
const PATH_PLACEHOLDER: &str = "@LAIKA_HOST_PATH@";
const ALLOWED_PLACEHOLDER: &str = "@LAIKA_ALLOWED@";
const CHROME_SCHEME: &str = "chrome-extension://";

/// Why an install or uninstall could not be done.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot {action} {}: {source}{}", path.display(), permission_hint(source))]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the host path {} is not valid UTF-8, which a JSON manifest cannot hold; install laika-host under a UTF-8 path", .0.display())]
    NonUtf8Path(PathBuf),
    #[error("the host path {} is not absolute; browsers only launch absolute paths", .0.display())]
    RelativePath(PathBuf),
    #[error("HOME is not set (or not absolute): cannot find the per-user browser folders")]
    NoHome,
    #[error("this OS is not supported by `laika-host install`; on Windows write the registry keys described in docs/install.md")]
    UnsupportedOs,
    #[error("manifest template {0} is broken: {1}")]
    Template(&'static str, String),
}

fn permission_hint(e: &std::io::Error) -> &'static str {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        " (system-wide folders need root: run it with sudo, or drop --system to install for your user only)"
    } else {
        ""
    }
}

pub type Result<T, E = InstallError> = std::result::Result<T, E>;

/// Operating systems whose manifest folders we know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
}

impl Os {
    /// The OS this binary runs on (BSDs use the Linux layout, as browsers do).
    pub fn current() -> Option<Os> {
        if cfg!(target_os = "macos") {
            Some(Os::MacOs)
        } else if cfg!(unix) {
            Some(Os::Linux)
        } else {
            None
        }
    }
}

/// The two manifest dialects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Chrome, Chromium, Edge, Brave, Vivaldi: `allowed_origins`.
    Chromium,
    /// Firefox: `allowed_extensions`.
    Firefox,
}

/// Browsers `install` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Browser {
    Chrome,
    Chromium,
    Edge,
    Brave,
    Vivaldi,
    Firefox,
}

/// Per-user folders, relative to the config home (Linux, Chromium family),
/// `~` (Linux Firefox) or `~/Library/Application Support` (macOS).
struct Layout {
    linux_user: &'static str,
    linux_system: &'static [&'static str],
    mac_user: &'static str,
    mac_system: &'static str,
    executables: &'static [&'static str],
    mac_app: &'static str,
}

impl Browser {
    pub const ALL: [Browser; 6] = [
        Browser::Chrome,
        Browser::Chromium,
        Browser::Edge,
        Browser::Brave,
        Browser::Vivaldi,
        Browser::Firefox,
    ];

    /// The name used on the command line (`--browser chrome`).
    pub fn name(self) -> &'static str {
        match self {
            Browser::Chrome => "chrome",
            Browser::Chromium => "chromium",
            Browser::Edge => "edge",
            Browser::Brave => "brave",
            Browser::Vivaldi => "vivaldi",
            Browser::Firefox => "firefox",
        }
    }

    /// The name people know.
    pub fn label(self) -> &'static str {
        match self {
            Browser::Chrome => "Google Chrome",
            Browser::Chromium => "Chromium",
            Browser::Edge => "Microsoft Edge",
            Browser::Brave => "Brave",
            Browser::Vivaldi => "Vivaldi",
            Browser::Firefox => "Firefox",
        }
    }

    pub fn from_name(name: &str) -> Option<Browser> {
        Browser::ALL.into_iter().find(|b| b.name() == name)
    }

    pub fn family(self) -> Family {
        match self {
            Browser::Firefox => Family::Firefox,
            _ => Family::Chromium,
        }
    }

    fn layout(self) -> Layout {
        match self {
            Browser::Chrome => Layout {
                linux_user: "google-chrome",
                linux_system: &["/etc/opt/chrome/native-messaging-hosts"],
                mac_user: "Google/Chrome",
                mac_system: "/Library/Google/Chrome/NativeMessagingHosts",
                executables: &["google-chrome", "google-chrome-stable"],
                mac_app: "Google Chrome.app",
            },
            Browser::Chromium => Layout {
                linux_user: "chromium",
                linux_system: &["/etc/chromium/native-messaging-hosts"],
                mac_user: "Chromium",
                mac_system: "/Library/Application Support/Chromium/NativeMessagingHosts",
                executables: &["chromium", "chromium-browser"],
                mac_app: "Chromium.app",
            },
            Browser::Edge => Layout {
                linux_user: "microsoft-edge",
                linux_system: &["/etc/opt/edge/native-messaging-hosts"],
                mac_user: "Microsoft Edge",
                mac_system: "/Library/Microsoft/Edge/NativeMessagingHosts",
                executables: &["microsoft-edge", "microsoft-edge-stable"],
                mac_app: "Microsoft Edge.app",
            },
            Browser::Brave => Layout {
                linux_user: "BraveSoftware/Brave-Browser",
                linux_system: &["/etc/opt/brave/native-messaging-hosts"],
                mac_user: "BraveSoftware/Brave-Browser",
                mac_system:
                    "/Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts",
                executables: &["brave-browser", "brave"],
                mac_app: "Brave Browser.app",
            },
            Browser::Vivaldi => Layout {
                linux_user: "vivaldi",
                linux_system: &["/etc/opt/vivaldi/native-messaging-hosts"],
                mac_user: "Vivaldi",
                mac_system: "/Library/Application Support/Vivaldi/NativeMessagingHosts",
                executables: &["vivaldi", "vivaldi-stable"],
                mac_app: "Vivaldi.app",
            },
            Browser::Firefox => Layout {
                linux_user: ".mozilla",
                // Firefox reads both; distributions differ on which exists.
                linux_system: &[
                    "/usr/lib/mozilla/native-messaging-hosts",
                    "/usr/lib64/mozilla/native-messaging-hosts",
                ],
                mac_user: "Mozilla",
                mac_system: "/Library/Application Support/Mozilla/NativeMessagingHosts",
                executables: &["firefox", "firefox-esr"],
                mac_app: "Firefox.app",
            },
        }
    }
}

/// Per-user or system-wide manifests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    System,
}

/// Everything paths depend on, injectable for tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    pub os: Os,
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME` when set and absolute: Chromium-family browsers on
    /// Linux keep their profile (and user manifests) there.
    pub config_home: Option<PathBuf>,
    /// The directories of `$PATH`, to see which browsers are installed.
    pub path_dirs: Vec<PathBuf>,
}

impl Env {
    /// From the running process: `HOME`, `XDG_CONFIG_HOME`, `PATH`.
    pub fn from_process() -> Result<Env> {
        let os = Os::current().ok_or(InstallError::UnsupportedOs)?;
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
            .ok_or(InstallError::NoHome)?;
        let config_home = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        let path_dirs = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        Ok(Env {
            os,
            home,
            config_home,
            path_dirs,
        })
    }

    /// The browser's own folder in the user's home (its profile root).
    pub fn browser_home(&self, browser: Browser) -> PathBuf {
        let layout = browser.layout();
        match (self.os, browser.family()) {
            (Os::Linux, Family::Firefox) => self.home.join(layout.linux_user),
            (Os::Linux, Family::Chromium) => self
                .config_home
                .clone()
                .unwrap_or_else(|| self.home.join(".config"))
                .join(layout.linux_user),
            (Os::MacOs, _) => self
                .home
                .join("Library/Application Support")
                .join(layout.mac_user),
        }
    }

    /// Folders the browser reads manifests from, in the order it looks.
    /// For [`Scope::System`] the first is where `install --system` writes.
    pub fn manifest_dirs(&self, browser: Browser, scope: Scope) -> Vec<PathBuf> {
        let layout = browser.layout();
        match (scope, self.os, browser.family()) {
            (Scope::User, Os::Linux, Family::Firefox) => {
                vec![self.browser_home(browser).join("native-messaging-hosts")]
            }
            (Scope::User, _, _) => vec![self.browser_home(browser).join("NativeMessagingHosts")],
            (Scope::System, Os::Linux, _) => {
                layout.linux_system.iter().map(PathBuf::from).collect()
            }
            (Scope::System, Os::MacOs, _) => vec![PathBuf::from(layout.mac_system)],
        }
    }

    /// Whether the browser looks installed: its folder in the home exists or
    /// its program is on `PATH` (macOS: its app bundle exists).
    pub fn is_present(&self, browser: Browser) -> bool {
        let layout = browser.layout();
        self.browser_home(browser).is_dir()
            || layout
                .executables
                .iter()
                .any(|exe| self.path_dirs.iter().any(|d| d.join(exe).is_file()))
            || (self.os == Os::MacOs
                && [
                    PathBuf::from("/Applications"),
                    self.home.join("Applications"),
                ]
                .iter()
                .any(|d| d.join(layout.mac_app).is_dir()))
    }
}

/// One place a manifest goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Who reads it, for people: "Chromium (user)", "custom profile /tmp/p".
    pub label: String,
    /// `None` for a custom `--user-data-dir`.
    pub browser: Option<Browser>,
    pub family: Family,
    pub dir: PathBuf,
}

impl Target {
    pub fn manifest_path(&self) -> PathBuf {
        self.dir.join(manifest_file_name())
    }
}

/// `dev.laika.host.json`: browsers look the host up by this exact name.
pub fn manifest_file_name() -> String {
    format!("{HOST_NAME}.json")
}

/// Which browsers a command is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The browsers that look installed ([`Env::is_present`]).
    Detected,
    All,
    These(Vec<Browser>),
}

impl Choice {
    pub fn browsers(&self, env: &Env) -> Vec<Browser> {
        match self {
            Choice::Detected => Browser::ALL
                .into_iter()
                .filter(|b| env.is_present(*b))
                .collect(),
            Choice::All => Browser::ALL.to_vec(),
            Choice::These(list) => Browser::ALL
                .into_iter()
                .filter(|b| list.contains(b))
                .collect(),
        }
    }
}

/// The target for a browser in a scope (system: the first folder it reads).
pub fn browser_target(env: &Env, browser: Browser, scope: Scope) -> Option<Target> {
    let dir = env.manifest_dirs(browser, scope).into_iter().next()?;
    let scope_name = match scope {
        Scope::User => "user",
        Scope::System => "system",
    };
    Some(Target {
        label: format!("{} ({scope_name})", browser.label()),
        browser: Some(browser),
        family: browser.family(),
        dir,
    })
}

/// A Chromium profile started with `--user-data-dir DIR` reads
/// `DIR/NativeMessagingHosts/`.
pub fn custom_target(user_data_dir: &Path) -> Target {
    Target {
        label: "Chromium (--user-data-dir)".into(),
        browser: None,
        family: Family::Chromium,
        dir: user_data_dir.join("NativeMessagingHosts"),
    }
}

/// Every target of a command: the chosen browsers in `scope`, then the
/// custom profiles.
pub fn targets(
    env: &Env,
    choice: &Choice,
    scope: Scope,
    user_data_dirs: &[PathBuf],
) -> Vec<Target> {
    choice
        .browsers(env)
        .into_iter()
        .filter_map(|b| browser_target(env, b, scope))
        .chain(user_data_dirs.iter().map(|d| custom_target(d)))
        .collect()
}

/// `^[a-z0-9_]+(\.[a-z0-9_]+)*$`: the host-name rule Chrome enforces (Firefox's
/// is looser).
pub fn is_valid_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

/// `chrome-extension://<32 letters a..p>/`, exactly as Chrome requires in
/// `allowed_origins` (trailing slash included, no wildcard, no path).
pub fn is_chromium_origin(origin: &str) -> bool {
    origin
        .strip_prefix(CHROME_SCHEME)
        .and_then(|rest| rest.strip_suffix('/'))
        .is_some_and(|id| id.len() == 32 && id.bytes().all(|b| (b'a'..=b'p').contains(&b)))
}

/// Firefox's add-on id syntax: `{uuid}` or `name@domain` (letters, digits,
/// `-`, `.`, `_`; case-insensitive).
pub fn is_firefox_extension_id(id: &str) -> bool {
    let id = id.to_ascii_lowercase();
    if let Some(inner) = id.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        let groups: Vec<&str> = inner.split('-').collect();
        let lens = [8, 4, 4, 4, 12];
        return groups.len() == lens.len()
            && groups
                .iter()
                .zip(lens)
                .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()));
    }
    let allowed = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._".contains(&b))
    };
    match id.split_once('@') {
        Some((local, domain)) => allowed(local) && !domain.is_empty() && allowed(domain),
        None => false,
    }
}

/// The callers a manifest of `family` allows: Laika's own id first, then the
/// configured entries of that family that the browser would accept
/// (Chromium origins normalized to end in `/`), without duplicates.
pub fn allowed_callers(family: Family, configured: &[String]) -> Vec<String> {
    let (own, candidates): (&str, Vec<String>) = match family {
        Family::Chromium => (
            LAIKA_CHROMIUM_ORIGIN,
            configured
                .iter()
                .filter(|c| c.starts_with(CHROME_SCHEME))
                .map(|c| {
                    if c.ends_with('/') {
                        c.clone()
                    } else {
                        format!("{c}/")
                    }
                })
                .filter(|c| is_chromium_origin(c))
                .collect(),
        ),
        Family::Firefox => (
            LAIKA_FIREFOX_ID,
            configured
                .iter()
                .filter(|c| !c.starts_with(CHROME_SCHEME) && is_firefox_extension_id(c))
                .cloned()
                .collect(),
        ),
    };
    let mut out = vec![own.to_string()];
    for c in candidates {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Configured `allowed_origins` entries that cannot go into any manifest
/// (reported so a typo is not silently dropped).
pub fn unusable_configured(configured: &[String]) -> Vec<String> {
    configured
        .iter()
        .filter(|c| {
            let chromium = c.starts_with(CHROME_SCHEME)
                && (is_chromium_origin(c) || is_chromium_origin(&format!("{c}/")));
            let firefox = !c.starts_with(CHROME_SCHEME) && is_firefox_extension_id(c);
            !chromium && !firefox
        })
        .cloned()
        .collect()
}

fn template(family: Family) -> (&'static str, &'static str) {
    match family {
        Family::Chromium => ("manifests/chromium.json.in", CHROMIUM_TEMPLATE),
        Family::Firefox => ("manifests/firefox.json.in", FIREFOX_TEMPLATE),
    }
}

/// The manifest text for `family`: the template with the host path and the
/// allowed callers filled in. Substitution happens on parsed JSON, so any
/// character in the path is escaped correctly.
pub fn render_manifest(family: Family, host_path: &Path, configured: &[String]) -> Result<String> {
    if !host_path.is_absolute() {
        return Err(InstallError::RelativePath(host_path.to_path_buf()));
    }
    let path = host_path
        .to_str()
        .ok_or_else(|| InstallError::NonUtf8Path(host_path.to_path_buf()))?;
    let (name, text) = template(family);
    let broken = |m: String| InstallError::Template(name, m);
    let parsed: Value = serde_json::from_str(text).map_err(|e| broken(e.to_string()))?;
    let filled = substitute(parsed, path, &allowed_callers(family, configured));
    let out = serde_json::to_string_pretty(&filled).map_err(|e| broken(e.to_string()))?;
    if out.contains("@LAIKA_") {
        return Err(broken("a placeholder was left unfilled".into()));
    }
    if filled.get("name").and_then(Value::as_str) != Some(HOST_NAME) {
        return Err(broken(format!("its name is not {HOST_NAME:?}")));
    }
    Ok(out + "\n")
}

fn substitute(value: Value, path: &str, allowed: &[String]) -> Value {
    match value {
        Value::String(s) if s == PATH_PLACEHOLDER => Value::String(path.to_string()),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .flat_map(|item| match item {
                    Value::String(s) if s == ALLOWED_PLACEHOLDER => {
                        allowed.iter().cloned().map(Value::String).collect()
                    }
                    other => vec![substitute(other, path, allowed)],
                })
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, substitute(v, path, allowed)))
                .collect(),
        ),
        other => other,
    }
}

/// What happened (or, in a dry run, would happen) to one manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A new file.
    Created,
    /// An existing file with other content was replaced.
    Updated,
    /// The file already had exactly this content.
    Unchanged,
    Removed,
    /// Nothing to remove.
    Absent,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    pub target: Target,
    pub path: PathBuf,
    pub outcome: Outcome,
    pub dry_run: bool,
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = match (self.outcome, self.dry_run) {
            (Outcome::Created, false) => "wrote",
            (Outcome::Created, true) => "would write",
            (Outcome::Updated, false) => "updated",
            (Outcome::Updated, true) => "would update",
            (Outcome::Unchanged, _) => "unchanged",
            (Outcome::Removed, false) => "removed",
            (Outcome::Removed, true) => "would remove",
            (Outcome::Absent, _) => "not present",
        };
        write!(
            f,
            "{verb:<12} {}  [{}]",
            self.path.display(),
            self.target.label
        )
    }
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> InstallError {
    let path = path.to_path_buf();
    move |source| InstallError::Io {
        action,
        path,
        source,
    }
}

/// Writes the manifest of every target (files already identical are left
/// alone). Stops at the first failure; `on_action` hears of each action as it
/// is done, so the caller can say what was written before the failure.
pub fn install(
    targets: &[Target],
    host_path: &Path,
    configured: &[String],
    dry_run: bool,
    on_action: &mut dyn FnMut(&Action),
) -> Result<Vec<Action>> {
    each_manifest(targets, dry_run, on_action, |target, path| {
        let text = render_manifest(target.family, host_path, configured)?;
        let outcome = match std::fs::read(path) {
            Ok(existing) if existing == text.as_bytes() => Outcome::Unchanged,
            Ok(_) => Outcome::Updated,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Created,
            Err(e) => return Err(io("read", path)(e)),
        };
        if !dry_run && outcome != Outcome::Unchanged {
            write_atomically(&target.dir, path, &text)?;
        }
        Ok(outcome)
    })
}

/// Runs `act` on each target's manifest path in turn and records what it
/// did, telling `on_action` as it goes; stops at the first failure.
fn each_manifest(
    targets: &[Target],
    dry_run: bool,
    on_action: &mut dyn FnMut(&Action),
    mut act: impl FnMut(&Target, &Path) -> Result<Outcome>,
) -> Result<Vec<Action>> {
    let mut done = Vec::new();
    for target in targets {
        let path = target.manifest_path();
        let outcome = act(target, &path)?;
        let action = Action {
            target: target.clone(),
            path,
            outcome,
            dry_run,
        };
        on_action(&action);
        done.push(action);
    }
    Ok(done)
}

fn write_atomically(dir: &Path, path: &Path, text: &str) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    let tmp = dir.join(format!(".{HOST_NAME}.json.tmp"));
    std::fs::write(&tmp, text).map_err(io("write", &tmp))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Browsers run as the user; a system manifest must be readable by all.
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644))
            .map_err(io("set permissions on", &tmp))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io("write", path)(e)
    })
}

/// Removes `dev.laika.host.json` from every target where it exists. Nothing
/// else is touched: not other manifests, not the folders.
pub fn uninstall(
    targets: &[Target],
    dry_run: bool,
    on_action: &mut dyn FnMut(&Action),
) -> Result<Vec<Action>> {
    each_manifest(targets, dry_run, on_action, |_, path| {
        // symlink_metadata: a link we find is removed, not what it points to.
        let outcome = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => {
                return Err(io("remove", path)(std::io::Error::other(
                    "it is a directory, not a manifest; remove it by hand",
                )))
            }
            Ok(_) => Outcome::Removed,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Absent,
            Err(e) => return Err(io("inspect", path)(e)),
        };
        if outcome == Outcome::Removed && !dry_run {
            std::fs::remove_file(path).map_err(io("remove", path))?;
        }
        Ok(outcome)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(os: Os) -> Env {
        Env {
            os,
            home: PathBuf::from("/home/u"),
            config_home: None,
            path_dirs: vec![],
        }
    }

    fn user_dir(env: &Env, b: Browser) -> String {
        env.manifest_dirs(b, Scope::User)[0].display().to_string()
    }

    #[test]
    fn linux_user_and_system_paths() {
        let e = env(Os::Linux);
        let expect = [
            (
                Browser::Chrome,
                "/home/u/.config/google-chrome/NativeMessagingHosts",
                "/etc/opt/chrome/native-messaging-hosts",
            ),
            (
                Browser::Chromium,
                "/home/u/.config/chromium/NativeMessagingHosts",
                "/etc/chromium/native-messaging-hosts",
            ),
            (
                Browser::Edge,
                "/home/u/.config/microsoft-edge/NativeMessagingHosts",
                "/etc/opt/edge/native-messaging-hosts",
            ),
            (
                Browser::Brave,
                "/home/u/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts",
                "/etc/opt/brave/native-messaging-hosts",
            ),
            (
                Browser::Vivaldi,
                "/home/u/.config/vivaldi/NativeMessagingHosts",
                "/etc/opt/vivaldi/native-messaging-hosts",
            ),
            (
                Browser::Firefox,
                "/home/u/.mozilla/native-messaging-hosts",
                "/usr/lib/mozilla/native-messaging-hosts",
            ),
        ];
        for (b, user, system) in expect {
            assert_eq!(user_dir(&e, b), user, "{b:?}");
            assert_eq!(e.manifest_dirs(b, Scope::System)[0], PathBuf::from(system));
        }
        let with_xdg = Env {
            config_home: Some(PathBuf::from("/x/cfg")),
            ..e
        };
        assert_eq!(
            user_dir(&with_xdg, Browser::Chromium),
            "/x/cfg/chromium/NativeMessagingHosts"
        );
        // Firefox does not follow XDG_CONFIG_HOME.
        assert_eq!(
            user_dir(&with_xdg, Browser::Firefox),
            "/home/u/.mozilla/native-messaging-hosts"
        );
    }

    #[test]
    fn macos_user_and_system_paths() {
        let e = env(Os::MacOs);
        let s = "/home/u/Library/Application Support";
        assert_eq!(
            user_dir(&e, Browser::Chrome),
            format!("{s}/Google/Chrome/NativeMessagingHosts")
        );
        assert_eq!(
            user_dir(&e, Browser::Edge),
            format!("{s}/Microsoft Edge/NativeMessagingHosts")
        );
        assert_eq!(
            user_dir(&e, Browser::Firefox),
            format!("{s}/Mozilla/NativeMessagingHosts")
        );
        assert_eq!(
            e.manifest_dirs(Browser::Chrome, Scope::System),
            vec![PathBuf::from("/Library/Google/Chrome/NativeMessagingHosts")]
        );
        assert_eq!(
            e.manifest_dirs(Browser::Firefox, Scope::System),
            vec![PathBuf::from(
                "/Library/Application Support/Mozilla/NativeMessagingHosts"
            )]
        );
    }

    #[test]
    fn manifests_are_filled_and_escaped() {
        let path = Path::new("/opt/we\"ird \\ dir/laika-host");
        let configured = vec![
            LAIKA_CHROMIUM_ORIGIN.to_string(),
            "chrome-extension://abcdefghijklmnopabcdefghijklmnop".to_string(),
            "chrome-extension://*/".to_string(),
            "laika@laika.dev".to_string(),
            "{8f4c1e2a-1111-2222-3333-444455556666}".to_string(),
            "not an id".to_string(),
        ];
        let chromium: Value =
            serde_json::from_str(&render_manifest(Family::Chromium, path, &configured).unwrap())
                .unwrap();
        assert_eq!(chromium["name"], HOST_NAME);
        assert_eq!(chromium["type"], "stdio");
        assert_eq!(chromium["path"], path.to_str().unwrap());
        assert_eq!(
            chromium["allowed_origins"],
            serde_json::json!([
                LAIKA_CHROMIUM_ORIGIN,
                "chrome-extension://abcdefghijklmnopabcdefghijklmnop/"
            ])
        );
        assert!(chromium.get("allowed_extensions").is_none());
        assert!(chromium["description"].as_str().unwrap().contains("Laika"));

        let firefox: Value =
            serde_json::from_str(&render_manifest(Family::Firefox, path, &configured).unwrap())
                .unwrap();
        assert_eq!(
            firefox["allowed_extensions"],
            serde_json::json!([LAIKA_FIREFOX_ID, "{8f4c1e2a-1111-2222-3333-444455556666}"])
        );
        assert!(firefox.get("allowed_origins").is_none());

        // Laika's own ids are there even with an empty config.
        let bare: Value =
            serde_json::from_str(&render_manifest(Family::Chromium, path, &[]).unwrap()).unwrap();
        assert_eq!(
            bare["allowed_origins"],
            serde_json::json!([LAIKA_CHROMIUM_ORIGIN])
        );
        assert_eq!(
            unusable_configured(&configured),
            vec!["chrome-extension://*/", "not an id"]
        );
    }

    #[test]
    fn relative_host_path_is_refused() {
        let e = render_manifest(Family::Chromium, Path::new("laika-host"), &[]).unwrap_err();
        assert!(e.to_string().contains("not absolute"), "{e}");
    }

    #[test]
    fn syntax_rules() {
        assert!(is_valid_host_name(HOST_NAME));
        for bad in [
            "",
            "Dev.laika",
            "dev..laika",
            ".dev",
            "dev.",
            "dev-laika",
            "dév",
        ] {
            assert!(!is_valid_host_name(bad), "{bad}");
        }
        assert!(is_chromium_origin(LAIKA_CHROMIUM_ORIGIN));
        for bad in [
            "chrome-extension://dkfmchejjpecjdaphalpgmmhifdjhomi",
            "chrome-extension://dkfmchejjpecjdaphalpgmmhifdjhomq/",
            "chrome-extension://*/",
            "chrome-extension://dkfmchejjpecjdaphalpgmmhifdjhomi/x/",
            "https://dkfmchejjpecjdaphalpgmmhifdjhomi/",
        ] {
            assert!(!is_chromium_origin(bad), "{bad}");
        }
        assert!(is_firefox_extension_id("laika@laika.dev"));
        assert!(is_firefox_extension_id("@x"));
        assert!(is_firefox_extension_id(
            "{8F4C1E2A-1111-2222-3333-444455556666}"
        ));
        for bad in ["laika", "a@", "a b@c", "{1234}", "x@y@z"] {
            assert!(!is_firefox_extension_id(bad), "{bad}");
        }
    }

    #[test]
    fn detection_uses_home_folders_and_path() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("firefox-esr"), "").unwrap();
        std::fs::create_dir_all(dir.path().join(".config/vivaldi")).unwrap();
        let e = Env {
            os: Os::Linux,
            home: dir.path().to_path_buf(),
            config_home: None,
            path_dirs: vec![bin],
        };
        assert_eq!(
            Choice::Detected.browsers(&e),
            vec![Browser::Vivaldi, Browser::Firefox]
        );
        assert_eq!(Choice::All.browsers(&e).len(), 6);
        let t = targets(
            &e,
            &Choice::These(vec![Browser::Firefox]),
            Scope::User,
            &[PathBuf::from("/p")],
        );
        assert_eq!(t.len(), 2);
        assert_eq!(
            t[1].manifest_path(),
            PathBuf::from("/p/NativeMessagingHosts/dev.laika.host.json")
        );
        assert_eq!(t[1].family, Family::Chromium);
    }

    #[test]
    fn install_then_uninstall_in_a_temp_dir() {
        let dir = tempfile::tempdir().unwrap();
        let target = custom_target(dir.path());
        let host = Path::new("/usr/bin/laika-host");
        let mut seen = Vec::new();
        let a = install(std::slice::from_ref(&target), host, &[], true, &mut |a| {
            seen.push(a.to_string())
        })
        .unwrap();
        assert_eq!(a[0].outcome, Outcome::Created);
        assert!(seen[0].starts_with("would write"), "{seen:?}");
        assert!(!target.manifest_path().exists(), "dry run wrote a file");
        let a = install(std::slice::from_ref(&target), host, &[], false, &mut |_| {}).unwrap();
        assert_eq!(a[0].outcome, Outcome::Created);
        let a = install(std::slice::from_ref(&target), host, &[], false, &mut |_| {}).unwrap();
        assert_eq!(a[0].outcome, Outcome::Unchanged);
        let other = target.dir.join("other.host.json");
        std::fs::write(&other, "{}").unwrap();
        let a = uninstall(std::slice::from_ref(&target), false, &mut |_| {}).unwrap();
        assert_eq!(a[0].outcome, Outcome::Removed);
        assert!(!target.manifest_path().exists());
        assert!(other.exists());
        let a = uninstall(std::slice::from_ref(&target), false, &mut |_| {}).unwrap();
        assert_eq!(a[0].outcome, Outcome::Absent);
    }
}
