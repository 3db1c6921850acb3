//! The semantic seam against a local HTTP server that speaks the OpenAI-compatible chat
//! protocol and returns chosen answers: the oracle and the validation are what is under test.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::util::{Area, files, report, run, run_env, stderr, stdout};

/// What the server answers to one request.
#[derive(Clone)]
enum Answer {
    /// A chat completion whose message content is this text.
    Content(String),
    /// This status and body.
    Raw(u16, String),
    /// A body of this many bytes.
    Huge(usize),
    /// This content, after a wait.
    Slow(Duration, String),
}

/// A chat server on localhost answering `answers` in order (the last one again after
/// that); it records each request's head and body.
struct Server {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

fn chat_body(content: &str) -> String {
    serde_json::json!({
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]
    })
    .to_string()
}

fn serve(answers: Vec<Answer>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/v1/chat/completions",
        listener.local_addr().unwrap()
    );
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            seen.lock()
                .unwrap()
                .push(format!("{head}\n{}", String::from_utf8_lossy(&body)));
            let answer = answers[n.min(answers.len() - 1)].clone();
            let (status, text) = match answer {
                Answer::Content(c) => (200, chat_body(&c)),
                Answer::Raw(s, b) => (s, b),
                Answer::Huge(n) => (200, "x".repeat(n)),
                Answer::Slow(wait, c) => {
                    std::thread::sleep(wait);
                    (200, chat_body(&c))
                }
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    Server { url, requests }
}

const MAIN: &str = "import sys\n\n\ndef ratio(a, b):\n    return a // b\n\n\nprint(ratio(1, 0))\n";

/// `repromin reduce` of a one-file tree whose failure is a ZeroDivisionError, with the
/// semantic backend at `url` when given. Without stubs or settle state: the tests count the backend's
/// calls, which follow from the deterministic passes' path (and the settle state's
/// confirming round, which runs the seam once more). Without frames: the answers raise
/// the error at the top of the file rather than in `ratio`, which the message alone
/// accepts (`an_answer_that_raises_elsewhere_is_refused_by_default` shows the default).
fn reduce(area: &Area, out: &str, url: Option<&str>) -> std::process::Output {
    let mut args = vec![
        "reduce",
        "proj",
        out,
        "--no-stubs",
        "--no-settle",
        "--no-frames",
        // The answers are whole lines: the seam is what is under test, not the characters.
        "--level",
        "lines",
    ];
    if let Some(url) = url {
        args.extend([
            "--semantic-endpoint",
            url,
            "--semantic-model",
            "tiny-model",
            "--semantic-timeout",
            "2s",
        ]);
    }
    args.extend(["--", "python3", "main.py"]);
    run_env(
        &args,
        area.dir.path(),
        &[("REPROMIN_SEMANTIC_TOKEN", "sekret-token")],
    )
}

#[test]
fn an_answer_that_keeps_the_failure_is_committed_and_listed_and_the_token_stays_secret() {
    let area = Area::new();
    area.write("proj", &[("main.py", MAIN)]);
    let server = serve(vec![
        Answer::Content("{\"edits\": [{\"path\": \"main.py\", \"replace\": \"0//0\\n\"}]}".into()),
        // A shorter file that no longer fails this way: the oracle refuses it.
        Answer::Content("{\"edits\": [{\"path\": \"main.py\", \"replace\": \"0\\n\"}]}".into()),
    ]);
    let o = reduce(&area, "out", Some(&server.url));
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("out"));
    assert_eq!(kept["main.py"], "0//0\n");
    let r = report(&area.path("out"));
    let semantic = &r["execution"]["semantic"];
    assert_eq!(semantic["backend"], "openai-chat");
    assert_eq!(semantic["model"], "tiny-model");
    assert_eq!(semantic["endpoint"], server.url.as_str());
    assert_eq!(semantic["calls"], 2, "{semantic}");
    assert_eq!(semantic["accepted_edits"], 1, "{semantic}");
    assert!(
        r["edits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["op"] == "replace" && e["path"] == "main.py"),
        "{}",
        r["edits"]
    );
    // The token went in the Authorization header, and nowhere else.
    let requests = server.requests.lock().unwrap().clone();
    assert!(requests[0].contains("sekret-token"), "{}", requests[0]);
    assert!(
        requests[0]
            .to_ascii_lowercase()
            .contains("authorization: bearer sekret-token")
    );
    assert!(requests[0].contains("tiny-model"));
    let written = std::fs::read_to_string(area.path("out/report.json")).unwrap_or_default()
        + &std::fs::read_to_string(area.path("out/repromin.md")).unwrap_or_default()
        + &stdout(&o)
        + &stderr(&o);
    assert!(!written.contains("sekret-token"));
}

#[test]
fn an_answer_that_raises_elsewhere_is_refused_by_default() {
    let area = Area::new();
    area.write("proj", &[("main.py", MAIN)]);
    let server = serve(vec![Answer::Content(
        "{\"edits\": [{\"path\": \"main.py\", \"replace\": \"0//0\\n\"}]}".into(),
    )]);
    let o = run_env(
        &[
            "reduce",
            "--level",
            "lines",
            "proj",
            "out",
            "--no-stubs",
            "--no-settle",
            "--semantic-endpoint",
            &server.url,
            "--semantic-model",
            "tiny-model",
            "--",
            "python3",
            "main.py",
        ],
        area.dir.path(),
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // `0//0` fails with the same message, raised at the top of the file, not in `ratio`.
    let kept = files(&area.path("out"));
    assert!(kept["main.py"].contains("def ratio"), "{}", kept["main.py"]);
    let r = report(&area.path("out"));
    assert_eq!(r["execution"]["semantic"]["accepted_edits"], 0);
    assert_eq!(r["oracle"]["frames"][0]["function"], "ratio");
}

#[test]
fn bad_answers_are_refused_and_leave_the_reduction_as_it_is_without_the_seam() {
    let area = Area::new();
    area.write("proj", &[("main.py", MAIN)]);
    let o = reduce(&area, "plain", None);
    assert!(o.status.success(), "{}", stderr(&o));
    let plain = files(&area.path("plain"));
    assert!(report(&area.path("plain"))["execution"]["semantic"].is_null());
    let edit =
        |path: &str| format!("{{\"edits\": [{{\"path\": \"{path}\", \"replace\": \"0//0\\n\"}}]}}");
    let cases = [
        (
            "unsafe path",
            Answer::Content(edit("../outside.txt")),
            "unsafe or unknown path",
        ),
        (
            "absolute path",
            Answer::Content("{\"edits\": [{\"path\": \"/etc/passwd\", \"delete\": true}]}".into()),
            "unsafe or unknown path",
        ),
        (
            "unknown file",
            Answer::Content(edit("other.py")),
            "unsafe or unknown path",
        ),
        (
            "prose",
            Answer::Content("Sure! Delete the import.".into()),
            "malformed",
        ),
        (
            "not a chat completion",
            Answer::Raw(200, "{\"error\": 1}".into()),
            "malformed",
        ),
        ("server error", Answer::Raw(500, "oops".into()), "HTTP 500"),
        ("huge body", Answer::Huge(2 * 1024 * 1024), "larger than"),
        (
            "slow answer",
            Answer::Slow(Duration::from_secs(5), edit("main.py")),
            "request to the semantic endpoint failed",
        ),
    ];
    for (n, (name, answer, why)) in cases.into_iter().enumerate() {
        let server = serve(vec![answer]);
        let out = format!("out{n}");
        let o = reduce(&area, &out, Some(&server.url));
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert_eq!(files(&area.path(&out)), plain, "{name}");
        let semantic = report(&area.path(&out))["execution"]["semantic"].clone();
        assert_eq!(semantic["accepted_edits"], 0, "{name}: {semantic}");
        let refused = semantic["refused"][0]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(refused.contains(why), "{name}: {semantic}");
        assert!(
            !area.path("outside.txt").exists() && !area.dir.path().join("outside.txt").exists()
        );
    }
}

#[test]
fn the_seam_needs_a_model_an_http_url_and_no_session() {
    let area = Area::new();
    area.write("proj", &[("main.py", MAIN)]);
    let o = run(
        &[
            "reduce",
            "--level",
            "lines",
            "proj",
            "out",
            "--semantic-endpoint",
            "http://127.0.0.1:9/x",
            "--",
            "python3",
            "main.py",
        ],
        area.dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--semantic-model"), "{}", stderr(&o));
    let o = run(
        &[
            "reduce",
            "--level",
            "lines",
            "proj",
            "out",
            "--semantic-endpoint",
            "ftp://x/y",
            "--semantic-model",
            "m",
            "--",
            "python3",
            "main.py",
        ],
        area.dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not an http:// or https:// URL"),
        "{}",
        stderr(&o)
    );
    let o = run(
        &[
            "reduce",
            "--level",
            "lines",
            "proj",
            "out",
            "--session",
            "s",
            "--semantic-endpoint",
            "http://127.0.0.1:9/x",
            "--semantic-model",
            "m",
            "--",
            "python3",
            "main.py",
        ],
        area.dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot be replayed"), "{}", stderr(&o));
    assert!(!area.path("out").exists());
}

#[test]
fn doctor_names_the_backend_and_whether_a_token_is_set_never_the_token() {
    let area = Area::new();
    area.write("proj", &[("main.py", MAIN)]);
    let args = [
        "doctor",
        "proj",
        "--semantic-endpoint",
        "http://127.0.0.1:9/v1/chat/completions",
        "--semantic-model",
        "tiny-model",
        "--",
        "python3",
        "main.py",
    ];
    let o = run_env(
        &args,
        area.dir.path(),
        &[("REPROMIN_SEMANTIC_TOKEN", "sekret-token")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o) + &stderr(&o);
    assert!(
        text.contains("semantic: model tiny-model at http://127.0.0.1:9/v1/chat/completions (timeout 60s, at most 3 calls), with the bearer token of REPROMIN_SEMANTIC_TOKEN"),
        "{text}"
    );
    assert!(!text.contains("sekret-token"), "{text}");
    let o = run(&args, area.dir.path());
    assert!(stdout(&o).contains("without a token"), "{}", stdout(&o));
}
