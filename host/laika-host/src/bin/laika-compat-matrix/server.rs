//! The llama.cpp server under the matrix, asked directly: its prompt
//! counters (`/metrics`, with `--metrics`), its one slot's prompt cache
//! emptied before a turn (`/slots`, with `--slot-save-path`), and the bare
//! model: the page and the question as the only message, no system prompt,
//! tools or schema, so the host's share of the wait shows beside it.

use crate::Fallible;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

pub struct Server {
    /// `base_url` without its `/v1`: where llama.cpp serves its own routes.
    root: String,
    base_url: String,
    http: reqwest::Client,
    rt: tokio::runtime::Runtime,
}

/// llama.cpp's prompt counters since it started.
#[derive(Debug, Clone, Copy, Default)]
pub struct PromptCounters {
    /// Prompt tokens read, whether computed or taken from the cache.
    pub tokens: f64,
    /// Seconds spent computing prompt tokens.
    pub seconds: f64,
}

impl PromptCounters {
    /// From llama.cpp's Prometheus text.
    fn parse(text: &str) -> Option<PromptCounters> {
        let counter = |name: &str| {
            text.lines()
                .filter_map(|l| l.strip_prefix(name)?.trim().parse::<f64>().ok())
                .next()
        };
        Some(PromptCounters {
            tokens: counter("llamacpp:prompt_tokens_total ")?
                + counter("llamacpp:prompt_tokens_cached_total ").unwrap_or(0.0),
            seconds: counter("llamacpp:prompt_seconds_total ")?,
        })
    }

    pub fn since(self, before: PromptCounters) -> PromptCounters {
        PromptCounters {
            tokens: self.tokens - before.tokens,
            seconds: self.seconds - before.seconds,
        }
    }
}

/// The bare model's answer to one call.
pub struct BareAnswer {
    pub text: String,
    pub first_text_ms: Option<f64>,
    pub total_ms: f64,
}

impl Server {
    pub fn new(base_url: &str) -> Fallible<Server> {
        let base_url = base_url.trim_end_matches('/').to_string();
        Ok(Server {
            root: base_url.trim_end_matches("/v1").to_string(),
            base_url,
            // No idle connections: llama-server closes them after 5 s, and a
            // turn takes longer, so a pooled one would be found dead.
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .timeout(Duration::from_secs(900))
                .build()?,
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?,
        })
    }

    /// `None` when the server does not publish its metrics.
    pub fn prompt_counters(&self) -> Option<PromptCounters> {
        let text = self.rt.block_on(async {
            let r = self
                .http
                .get(format!("{}/metrics", self.root))
                .send()
                .await
                .ok()?;
            r.status().is_success().then_some(())?;
            r.text().await.ok()
        })?;
        PromptCounters::parse(&text)
    }

    /// Empties the slot's prompt cache, so the next turn reads its whole
    /// prompt as a first question on a page does; false when the server
    /// cannot.
    pub fn erase_cache(&self) -> bool {
        self.rt.block_on(async {
            self.http
                .post(format!("{}/slots/0?action=erase", self.root))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
        })
    }

    /// One streamed call with `prompt` as the only message.
    pub fn ask_bare(&self, prompt: &str, max_tokens: u32) -> Fallible<BareAnswer> {
        let body = json!({
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": true,
        });
        self.rt.block_on(async {
            let started = Instant::now();
            let mut response = self
                .http
                .post(format!("{}/chat/completions", self.base_url))
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await?
                .error_for_status()?;
            let mut pending = Vec::new();
            let mut answer = BareAnswer {
                text: String::new(),
                first_text_ms: None,
                total_ms: 0.0,
            };
            while let Some(chunk) = response.chunk().await? {
                pending.extend_from_slice(&chunk);
                while let Some(end) = pending.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    let Some(data) = std::str::from_utf8(&line)
                        .ok()
                        .and_then(|l| l.trim().strip_prefix("data:"))
                    else {
                        continue;
                    };
                    let Ok(event) = serde_json::from_str::<Value>(data.trim()) else {
                        continue;
                    };
                    let piece = event["choices"][0]["delta"]["content"]
                        .as_str()
                        .unwrap_or_default();
                    if !piece.trim().is_empty() && answer.first_text_ms.is_none() {
                        answer.first_text_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
                    }
                    answer.text.push_str(piece);
                }
            }
            answer.total_ms = started.elapsed().as_secs_f64() * 1000.0;
            Ok(answer)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_counters_are_read_from_the_metrics() {
        let text = "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed\n\
            # TYPE llamacpp:prompt_tokens_total counter\n\
            llamacpp:prompt_tokens_total 4163\n\
            llamacpp:prompt_tokens_cached_total 37\n\
            llamacpp:prompt_seconds_total 40.7417\n\
            llamacpp:prompt_tokens_seconds 0\n";
        let c = PromptCounters::parse(text).unwrap();
        assert_eq!(c.tokens, 4200.0);
        assert!((c.seconds - 40.7417).abs() < 1e-9);
        assert!(PromptCounters::parse("llamacpp:n_decode_total 3\n").is_none());
    }
}
