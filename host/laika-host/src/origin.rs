//! Who launched the host, and whether they may use it.
//!
//! Browsers start a native host with extra arguments that name the caller:
//! Chromium-family browsers (Chrome, Chromium, Edge, Brave, Vivaldi) pass the
//! extension origin `chrome-extension://<id>/` first (on Windows followed by
//! `--parent-window=<handle>`); Firefox passes the path of the host manifest
//! and then the add-on id. Browsers may add flags in future, so every
//! `--flag` is ignored.
//!
//! Invariant: a caller a browser identified is served only if it is in the
//! configured `allowed_origins`. A launch that names no browser caller (the
//! host run by hand) is [`Caller::Unknown`] and allowed: whoever can run the
//! binary by hand can already do everything it does. A launch with a
//! browser-style argument that is not well formed (an uppercase or wrong-length
//! id, a `moz-extension://` origin) is [`Caller::Malformed`] and refused,
//! never served as a hand launch.

use laika_protocol::error::{Error, ErrorCode, Result};

const CHROME_SCHEME: &str = "chrome-extension://";
/// Chromium extension ids are 32 letters from `a` to `p` (a hex digest
/// spelled with a..p).
const EXTENSION_ID_LEN: usize = 32;

/// The program that launched the host, as told by its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// A Chromium-family browser; `origin` is `chrome-extension://<id>/`.
    Chromium {
        origin: String,
        extension_id: String,
    },
    /// Firefox, with the host manifest it read and the calling add-on.
    Firefox {
        manifest_path: String,
        addon_id: String,
    },
    /// Not launched by a browser: no browser-style argument at all.
    Unknown,
    /// A browser-style argument (`*-extension://…`) that is not a
    /// well-formed Chromium origin.
    Malformed { argument: String },
}

/// Identifies the caller from the launch arguments (without `argv[0]`).
///
/// Arguments starting with `--` are skipped. The first remaining argument is
/// a Chromium origin if it has the `chrome-extension://` scheme (a malformed
/// one gives `Unknown`); otherwise a `.json` path followed by a non-empty
/// argument is Firefox's manifest path and add-on id.
pub fn caller_from_args(args: &[String]) -> Caller {
    let mut positional = args.iter().filter(|a| !a.starts_with("--"));
    let Some(first) = positional.next() else {
        return Caller::Unknown;
    };
    if first.starts_with(CHROME_SCHEME) {
        if let Some(id) = chrome_extension_id(first) {
            return Caller::Chromium {
                origin: format!("{CHROME_SCHEME}{id}/"),
                extension_id: id.to_owned(),
            };
        }
    }
    let second = positional.next();
    if let Some(addon) = second {
        if first.to_ascii_lowercase().ends_with(".json") && !addon.is_empty() {
            return Caller::Firefox {
                manifest_path: first.clone(),
                addon_id: addon.clone(),
            };
        }
    }
    match args.iter().find(|a| browser_style(a)) {
        Some(argument) => Caller::Malformed {
            argument: argument.clone(),
        },
        None => Caller::Unknown,
    }
}

/// An argument a browser would pass to name an extension:
/// `<something>-extension:` in any case (`chrome-extension://`,
/// `moz-extension://`, `safari-web-extension://`).
fn browser_style(arg: &str) -> bool {
    arg.split_once(':')
        .is_some_and(|(scheme, _)| scheme.to_ascii_lowercase().ends_with("-extension"))
}

/// The extension id of `chrome-extension://<id>` with an optional trailing
/// slash and nothing else.
fn chrome_extension_id(origin: &str) -> Option<&str> {
    let rest = origin.strip_prefix(CHROME_SCHEME)?;
    let id = rest.strip_suffix('/').unwrap_or(rest);
    let well_formed =
        id.len() == EXTENSION_ID_LEN && id.bytes().all(|b| (b'a'..=b'p').contains(&b));
    well_formed.then_some(id)
}

/// Allows the caller if the allow-list names it.
///
/// `allowed` holds Chromium origins (`chrome-extension://<id>/`, the trailing
/// slash optional) and Firefox add-on ids. Chromium callers must match an
/// origin, Firefox callers an add-on id; `Unknown` is always allowed.
/// Otherwise `ORIGIN_DENIED`, naming the caller and the entry to add.
pub fn check_allowed(caller: &Caller, allowed: &[String]) -> Result<()> {
    match caller {
        Caller::Unknown => Ok(()),
        Caller::Malformed { argument } => Err(Error::new(
            ErrorCode::OriginDenied,
            format!(
                "the launch argument {:?} looks like a browser extension origin but is not a \
                 well-formed chrome-extension://<32 letters a-p>/ origin; refusing to serve",
                laika_core::text::prefix_chars(argument, 120)
            ),
        )),
        Caller::Chromium { origin, .. } => {
            let listed = allowed
                .iter()
                .filter(|a| a.starts_with(CHROME_SCHEME))
                .any(|a| a.strip_suffix('/').unwrap_or(a) == origin.trim_end_matches('/'));
            listed
                .then_some(())
                .ok_or_else(|| denied(&format!("browser extension {origin:?}"), origin))
        }
        Caller::Firefox { addon_id, .. } => {
            let listed = allowed
                .iter()
                .filter(|a| !a.starts_with(CHROME_SCHEME))
                .any(|a| a == addon_id);
            listed
                .then_some(())
                .ok_or_else(|| denied(&format!("Firefox add-on {addon_id:?}"), addon_id))
        }
    }
}

fn denied(who: &str, entry: &str) -> Error {
    Error::new(
        ErrorCode::OriginDenied,
        format!(
            "{who} is not allowed to use this host; to allow it, add {entry:?} \
             to `allowed_origins` in the host's config file"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "abcdefghijklmnopabcdefghijklmnop";

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn chrome() -> Caller {
        Caller::Chromium {
            origin: format!("chrome-extension://{ID}/"),
            extension_id: ID.into(),
        }
    }

    #[test]
    fn chrome_origin_is_first_argument() {
        assert_eq!(
            caller_from_args(&args(&[&format!("chrome-extension://{ID}/")])),
            chrome()
        );
        // Without the trailing slash the origin is still normalised.
        assert_eq!(
            caller_from_args(&args(&[&format!("chrome-extension://{ID}")])),
            chrome()
        );
    }

    #[test]
    fn windows_parent_window_and_unknown_flags_are_ignored() {
        let origin = format!("chrome-extension://{ID}/");
        assert_eq!(
            caller_from_args(&args(&[&origin, "--parent-window=6752"])),
            chrome()
        );
        assert_eq!(
            caller_from_args(&args(&["--future-flag", &origin, "--other=1"])),
            chrome()
        );
    }

    #[test]
    fn malformed_browser_origins_are_refused() {
        for bad in [
            "chrome-extension://".to_string(),
            "chrome-extension://short/".to_string(),
            format!("chrome-extension://{}/", ID.to_uppercase()),
            format!("CHROME-EXTENSION://{ID}/"),
            format!("chrome-extension://{}q/", &ID[1..]),
            format!("chrome-extension://{ID}/path"),
            format!("chrome-extension://{ID}//"),
            format!("moz-extension://{ID}/"),
            "moz-extension://0d3f-11aa/".to_string(),
            "safari-web-extension://x/".to_string(),
        ] {
            let caller = caller_from_args(&args(&[&bad]));
            assert_eq!(
                caller,
                Caller::Malformed {
                    argument: bad.clone()
                },
                "{bad}"
            );
            let err = check_allowed(&caller, &args(&[&bad])).unwrap_err();
            assert_eq!(err.code, ErrorCode::OriginDenied);
        }
        // Also behind flags or after another argument.
        let late = args(&["--x", "serve", "moz-extension://abc/"]);
        assert!(matches!(caller_from_args(&late), Caller::Malformed { .. }));
    }

    #[test]
    fn firefox_passes_manifest_then_addon_id() {
        let caller = caller_from_args(&args(&[
            "/home/u/.mozilla/native-messaging-hosts/laika.json",
            "laika@example.org",
        ]));
        assert_eq!(
            caller,
            Caller::Firefox {
                manifest_path: "/home/u/.mozilla/native-messaging-hosts/laika.json".into(),
                addon_id: "laika@example.org".into(),
            }
        );
        let windows = caller_from_args(&args(&[
            "--flag",
            r"C:\Laika\LAIKA.JSON",
            "{8f4c1e2a-1111-2222-3333-444455556666}",
        ]));
        assert!(matches!(windows, Caller::Firefox { addon_id, .. } if addon_id.starts_with('{')));
    }

    #[test]
    fn hand_launches_are_unknown() {
        assert_eq!(caller_from_args(&[]), Caller::Unknown);
        assert_eq!(caller_from_args(&args(&["--verbose"])), Caller::Unknown);
        assert_eq!(caller_from_args(&args(&["manifest.json"])), Caller::Unknown);
        assert_eq!(caller_from_args(&args(&["serve", "x"])), Caller::Unknown);
        assert_eq!(check_allowed(&Caller::Unknown, &[]), Ok(()));
    }

    #[test]
    fn allow_list_matches_origins_and_addon_ids() {
        let with_slash = args(&[&format!("chrome-extension://{ID}/")]);
        let without = args(&["other@addon", &format!("chrome-extension://{ID}")]);
        assert_eq!(check_allowed(&chrome(), &with_slash), Ok(()));
        assert_eq!(check_allowed(&chrome(), &without), Ok(()));
        let firefox = Caller::Firefox {
            manifest_path: "m.json".into(),
            addon_id: "laika@example.org".into(),
        };
        assert_eq!(
            check_allowed(&firefox, &args(&["laika@example.org"])),
            Ok(())
        );
    }

    #[test]
    fn denial_names_caller_and_fix() {
        let e = check_allowed(&chrome(), &args(&["laika@example.org", ID])).unwrap_err();
        assert_eq!(e.code, ErrorCode::OriginDenied);
        assert!(
            e.message.contains(&format!("chrome-extension://{ID}/")),
            "{e}"
        );
        assert!(e.message.contains("allowed_origins"), "{e}");

        // An add-on id never matches a chrome origin entry, nor vice versa.
        let firefox = Caller::Firefox {
            manifest_path: "m.json".into(),
            addon_id: format!("chrome-extension://{ID}/"),
        };
        let e =
            check_allowed(&firefox, &args(&[&format!("chrome-extension://{ID}/")])).unwrap_err();
        assert_eq!(e.code, ErrorCode::OriginDenied);
        assert!(e.message.contains("Firefox add-on"), "{e}");

        let e = check_allowed(&chrome(), &[]).unwrap_err();
        assert_eq!(e.code, ErrorCode::OriginDenied);
    }
}
