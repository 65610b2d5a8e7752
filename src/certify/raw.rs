//! What goes past any MCP client: lines written to a stdio server's input as they are, and
//! bodies POSTed to an HTTP endpoint as they are. Each exchange is kept as evidence.

use crate::certify::Evidence;
use crate::certify::probe::{Ctx, Probe};
use crate::client::spec::TransportSpec;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// How long a reply to one line may take, or the run's `--timeout` when that is shorter (a
/// user who asks for 2 s is not kept waiting 5; the tests run certify that way).
const WAIT: Duration = Duration::from_secs(5);

fn wait(ctx: &Ctx) -> Duration {
    WAIT.min(ctx.options.timeout)
}

/// A stdio server started for raw lines.
pub struct RawStdio {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    /// How long a reply to one line may take.
    wait: Duration,
}

impl RawStdio {
    pub async fn start(ctx: &Ctx) -> Result<RawStdio, String> {
        let (program, args, env, cwd) =
            crate::client::connection::command_of(&ctx.spec, &ctx.options)
                .map_err(|e| e.message)?;
        let mut command = tokio::process::Command::new(&program);
        command
            .args(&args)
            .envs(&env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("{} could not be started: {e}", program.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        Ok(RawStdio {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            wait: wait(ctx),
        })
    }

    /// Writes one line (a newline is added).
    pub async fn write(&mut self, line: &str) -> Result<(), String> {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.stdin
            .write_all(&bytes)
            .await
            .map_err(|e| format!("the server's input is closed: {e}"))?;
        self.stdin.flush().await.map_err(|e| e.to_string())
    }

    /// The next line the server writes, within `wait`.
    pub async fn read(&mut self) -> Result<String, String> {
        match tokio::time::timeout(self.wait, self.lines.next_line()).await {
            Ok(Ok(Some(line))) => Ok(line),
            Ok(Ok(None)) => Err("the server closed its output (it exited?)".into()),
            Ok(Err(e)) => Err(format!("the server's output cannot be read: {e}")),
            Err(_) => Err(format!("no line within {} s", self.wait.as_secs_f64())),
        }
    }

    /// Writes `line` and reads the reply, keeping both as evidence.
    pub async fn exchange(&mut self, p: &mut Probe, line: &str) -> Result<String, String> {
        self.write(line).await?;
        let reply = self.read().await;
        p.evidence.push(Evidence::Raw {
            transport: "stdio".into(),
            sent: shorten(line),
            received: match &reply {
                Ok(r) => shorten(r),
                Err(e) => format!("(nothing: {e})"),
            },
        });
        reply
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub async fn stop(mut self) {
        drop(self.stdin);
        if tokio::time::timeout(Duration::from_millis(500), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// POSTs `body` to the server's endpoint as it is; the status and the body of the answer.
pub async fn post(ctx: &Ctx, p: &mut Probe, body: Vec<u8>) -> Result<(u16, String), String> {
    let TransportSpec::Http(http) = &ctx.spec.transport else {
        return Err("not an HTTP server".into());
    };
    let client = reqwest::Client::builder()
        .timeout(wait(ctx))
        .build()
        .map_err(|e| e.to_string())?;
    let mut request = client
        .post(&http.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    for (k, v) in &http.headers {
        request = request.header(k, v);
    }
    if let Some(token) = &http.token {
        request = request.bearer_auth(token);
    }
    let sent = shorten(&String::from_utf8_lossy(&body));
    let answer = request.body(body).send().await;
    let result = match answer {
        Ok(r) => {
            let status = r.status().as_u16();
            let text = r.text().await.unwrap_or_default();
            Ok((status, text))
        }
        Err(e) => Err(format!("the POST failed: {e}")),
    };
    p.evidence.push(Evidence::Raw {
        transport: "HTTP".into(),
        sent,
        received: match &result {
            Ok((status, text)) => format!("{status} {}", shorten(text)),
            Err(e) => format!("(nothing: {e})"),
        },
    });
    result
}

/// A JSON-RPC error object's code, if `text` is one (a JSON object with `error.code`).
pub fn error_code(text: &str) -> Option<(i64, Value)> {
    let v: Value = serde_json::from_str(text.trim()).ok()?;
    let code = v.get("error")?.get("code")?.as_i64()?;
    Some((code, v.get("id").cloned().unwrap_or(Value::Null)))
}

fn shorten(text: &str) -> String {
    if text.len() > 300 {
        let cut: String = text.chars().take(200).collect();
        format!("{cut}… ({} bytes)", text.len())
    } else {
        text.to_owned()
    }
}
