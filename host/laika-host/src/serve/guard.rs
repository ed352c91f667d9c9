//! Who may ask: every request needs the bearer token, a `Host` that names
//! this server (so a web page cannot reach it through DNS rebinding) and no
//! `Origin` but this server's own (so a page in a browser cannot use a
//! token it learned). No CORS headers are ever sent.

use laika_protocol::error::{Error, ErrorCode, Result};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use subtle::ConstantTimeEq;

/// The token file's name in the data dir.
pub const TOKEN_FILE: &str = "serve-token";
/// Shorter tokens are guessable.
const MIN_TOKEN_CHARS: usize = 16;

/// The bearer token, and where it is kept (when it is not from the
/// environment). Its `Debug` never shows it.
pub struct Token {
    secret: String,
    pub path: Option<PathBuf>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token").field("path", &self.path).finish()
    }
}

fn token_error(message: String) -> Error {
    Error::new(ErrorCode::ConfigInvalid, message)
}

impl Token {
    /// `LAIKA_SERVE_TOKEN` when set, else the token kept in `data_dir`,
    /// made on first start (mode 0600).
    pub fn load(from_env: Option<String>, data_dir: &Path) -> Result<Token> {
        if let Some(secret) = from_env.filter(|t| !t.is_empty()) {
            if secret.chars().count() < MIN_TOKEN_CHARS {
                return Err(token_error(format!(
                    "LAIKA_SERVE_TOKEN must be at least {MIN_TOKEN_CHARS} characters"
                )));
            }
            return Ok(Token { secret, path: None });
        }
        let path = data_dir.join(TOKEN_FILE);
        let secret = match read_token(&path)? {
            Some(secret) => secret,
            None => write_token(&path)?,
        };
        Ok(Token {
            secret,
            path: Some(path),
        })
    }

    /// Whether an `Authorization` header value carries this token, compared
    /// in constant time.
    pub fn accepts(&self, authorization: Option<&[u8]>) -> bool {
        let Some(given) = authorization.and_then(|h| h.strip_prefix(b"Bearer ".as_slice())) else {
            return false;
        };
        bool::from(given.ct_eq(self.secret.as_bytes()))
    }
}

fn read_token(path: &Path) -> Result<Option<String>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(token_error(format!(
                "cannot read the serve token {}: {e}",
                path.display()
            )))
        }
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map(|m| m.permissions().mode())
            .unwrap_or(0);
        if mode & 0o077 != 0 {
            return Err(token_error(format!(
                "the serve token {} can be read by other users (mode {:o}); run chmod 600 on it",
                path.display(),
                mode & 0o777
            )));
        }
    }
    let secret = text.trim().to_owned();
    if secret.chars().count() < MIN_TOKEN_CHARS {
        return Err(token_error(format!(
            "the serve token {} is shorter than {MIN_TOKEN_CHARS} characters; delete it to get a new one",
            path.display()
        )));
    }
    Ok(Some(secret))
}

/// A new token from the OS's random source (two UUID v4s: 244 random bits),
/// written only if no file is there, readable by its owner alone.
fn write_token(path: &Path) -> Result<String> {
    use std::io::Write;
    let secret = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let fail = |e: std::io::Error| {
        token_error(format!(
            "cannot write the serve token {}: {e}",
            path.display()
        ))
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(fail)?;
    file.write_all(secret.as_bytes())
        .and_then(|_| file.sync_all())
        .map_err(fail)?;
    Ok(secret)
}

/// The `Host` values that name this server, lower case.
#[derive(Debug, Clone)]
pub struct Hosts(Vec<String>);

impl Hosts {
    /// The listen address, `localhost` on loopback, and the configured extras.
    pub fn new(addr: SocketAddr, extra: &[String]) -> Hosts {
        let port = addr.port();
        let mut hosts = vec![addr.to_string()];
        if addr.ip().is_loopback() {
            hosts.push(format!("localhost:{port}"));
        }
        hosts.extend(extra.iter().map(|h| h.trim().to_lowercase()));
        Hosts(hosts)
    }

    pub fn accepts_host(&self, host: Option<&str>) -> bool {
        host.is_some_and(|h| {
            let h = h.trim().to_ascii_lowercase();
            self.0.contains(&h)
        })
    }

    /// No `Origin` (a program), or this server's own.
    pub fn accepts_origin(&self, origin: Option<&str>) -> bool {
        let Some(origin) = origin else { return true };
        let origin = origin.trim().to_ascii_lowercase();
        origin
            .strip_prefix("http://")
            .is_some_and(|host| self.0.iter().any(|h| h == host))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_made_once_private_and_compared_whole() {
        let dir = tempfile::tempdir().unwrap();
        let t = Token::load(None, dir.path()).unwrap();
        let again = Token::load(None, dir.path()).unwrap();
        assert_eq!(t.secret, again.secret);
        assert_eq!(t.secret.len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(TOKEN_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
            std::fs::set_permissions(
                dir.path().join(TOKEN_FILE),
                std::fs::Permissions::from_mode(0o644),
            )
            .unwrap();
            let e = Token::load(None, dir.path()).unwrap_err();
            assert!(e.message.contains("chmod 600"), "{}", e.message);
        }
        let header = format!("Bearer {}", t.secret);
        assert!(t.accepts(Some(header.as_bytes())));
        assert!(!t.accepts(Some(&header.as_bytes()[..header.len() - 1])));
        assert!(!t.accepts(Some(t.secret.as_bytes())));
        assert!(!t.accepts(None));
        assert!(!format!("{t:?}").contains(&t.secret));
        let env = Token::load(Some("short".into()), dir.path());
        assert!(env.is_err());
    }

    #[test]
    fn hosts_and_origins_must_name_this_server() {
        let hosts = Hosts::new(
            "127.0.0.1:8744".parse().unwrap(),
            &["Laika.lan:8744".into()],
        );
        assert!(hosts.accepts_host(Some("127.0.0.1:8744")));
        assert!(hosts.accepts_host(Some("LOCALHOST:8744")));
        assert!(hosts.accepts_host(Some("laika.lan:8744")));
        assert!(!hosts.accepts_host(Some("evil.example:8744")));
        assert!(!hosts.accepts_host(Some("127.0.0.1:80")));
        assert!(!hosts.accepts_host(None));
        assert!(hosts.accepts_origin(None));
        assert!(hosts.accepts_origin(Some("http://localhost:8744")));
        assert!(!hosts.accepts_origin(Some("https://evil.example")));
        assert!(!hosts.accepts_origin(Some("null")));
    }
}
