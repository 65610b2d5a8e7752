//! Robustness (MCP-BINDING sections 2 and 6): input that is not JSON gets a JSON-RPC error;
//! junk, oversized and deeply nested input does not kill the server, which answers a normal
//! Request afterwards.

use crate::certify::probe::{Ctx, Probe};
use crate::certify::raw::{RawStdio, error_code, post};
use crate::certify::turns::plain;
use serde_json::{Value, json};

/// How long an answer to a Request beyond the depth every reader takes is waited for (or the
/// run's `--timeout` when that is shorter).
const BEYOND_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

const NOT_JSON: &[&str] = &["this is not JSON", "{\"jsonrpc\": \"2.0\", \"id\": 1, "];

pub async fn non_json(ctx: &Ctx, p: &mut Probe) {
    if ctx.learnt.stdio {
        let mut raw = match RawStdio::start(ctx).await {
            Ok(r) => r,
            Err(e) => return p.fail(e),
        };
        for line in NOT_JSON {
            match raw.exchange(p, line).await {
                Ok(reply) => {
                    let code = error_code(&reply);
                    p.check(
                        matches!(&code, Some((-32700, Value::Null))),
                        || format!("the line {line:?} was answered {reply:?}, not a JSON-RPC error -32700 with id null"),
                    );
                }
                Err(e) => p.fail(format!("the line {line:?} got no answer: {e}")),
            }
        }
        raw.stop().await;
    } else {
        for body in NOT_JSON {
            match post(ctx, p, body.as_bytes().to_vec()).await {
                Ok((status, text)) => {
                    p.check((400..500).contains(&status), || {
                        format!("a POST of {body:?} was answered {status}, not a 4xx")
                    });
                    p.check(error_code(&text).is_some(), || {
                        format!("a POST of {body:?} was answered with a body that is not a JSON-RPC error object: {text:?}")
                    });
                }
                Err(e) => p.fail(e),
            }
        }
    }
}

pub async fn junk(ctx: &Ctx, p: &mut Probe) {
    let junk: Vec<String> = vec![
        "\u{1}\u{2}\u{7f} binary noise".into(),
        "[1, 2,".into(),
        "{}".into(),
        "[]".into(),
        "null".into(),
        "{\"jsonrpc\": \"2.0\", \"id\": 7}".into(),
        "{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\": \"tools/call\", \"params\": 5}".into(),
        format!("{{\"junk\": \"{}\"}}", "x".repeat(200_000)),
    ];
    if ctx.learnt.stdio {
        let mut raw = match RawStdio::start(ctx).await {
            Ok(r) => r,
            Err(e) => return p.fail(e),
        };
        for line in &junk {
            if let Err(e) = raw.write(line).await {
                p.fail(format!("the server stopped reading its input: {e}"));
                return;
            }
        }
        let ping = "{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": \"ping\"}";
        let mut answered = false;
        if raw.write(ping).await.is_ok() {
            // Replies to the junk come first; the ping's is the one with id 99.
            for _ in 0..junk.len() + 2 {
                match raw.read().await {
                    Ok(line) => {
                        let id = serde_json::from_str::<Value>(&line)
                            .ok()
                            .and_then(|v| v.get("id").cloned());
                        if id == Some(json!(99)) {
                            answered = true;
                            p.evidence.push(crate::certify::Evidence::Raw {
                                transport: "stdio".into(),
                                sent: format!("{} junk lines, then {ping}", junk.len()),
                                received: line,
                            });
                            break;
                        }
                    }
                    Err(e) => {
                        p.evidence.push(crate::certify::Evidence::Raw {
                            transport: "stdio".into(),
                            sent: format!("{} junk lines, then {ping}", junk.len()),
                            received: format!("(nothing: {e})"),
                        });
                        break;
                    }
                }
            }
        }
        p.check(answered && raw.alive(), || {
            format!(
                "after {} lines of junk the server {}",
                junk.len(),
                if raw.alive() {
                    "no longer answers (a ping got no reply)"
                } else {
                    "exited"
                }
            )
        });
        raw.stop().await;
    } else {
        for body in &junk {
            if let Ok((status, _)) = post(ctx, p, body.as_bytes().to_vec()).await {
                p.check(status < 500, || {
                    format!("junk was answered {status}, a server error")
                });
            }
        }
        afterwards(ctx, p, "after junk").await;
    }
}

/// A normal Request in a new dialogue is answered (HTTP: the server that took the input).
async fn afterwards(ctx: &Ctx, p: &mut Probe, when: &str) {
    let Some(mut d) = p.open(ctx, "afterwards").await else {
        return;
    };
    let sent = d.send(p, plain(ctx)).await;
    p.answered(&sent, &format!("a normal Request {when}"));
    d.close().await;
}

pub async fn oversized(ctx: &Ctx, p: &mut Probe) {
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let sent = d.send(p, plain(ctx)).await;
    if !p.answered(&sent, "the first Request") {
        d.close().await;
        return;
    }
    let mut big = plain(ctx);
    big["DescrMetadata"] = json!("x".repeat(6 * 1024 * 1024));
    let request = d.d.prepare(big, crate::client::dialogue::Filling::Missing);
    // Any answer will do, even none (a size limit): what matters is what follows. The
    // evidence keeps what was sent in words, not its 6 MiB.
    let sent = d.send_prepared(p, request, false).await;
    described(p, "a Request whose DescrMetadata is 6 MiB of \"x\"", &sent);
    let sent = d.send(p, plain(ctx)).await;
    p.answered(
        &sent,
        "a normal Request after a 6 MiB one, on the same connection",
    );
    d.close().await;
}

/// Replaces the last turn's evidence with a description of what was sent and what came
/// back.
fn described(p: &mut Probe, what: &str, sent: &crate::certify::probe::Sent) {
    p.evidence.pop();
    p.evidence.push(crate::certify::Evidence::Raw {
        transport: "MCP".into(),
        sent: what.to_owned(),
        received: sent.what(),
    });
}

/// `{"Nest": {"Nest": ... {}}}`, `depth` objects deep.
fn nested(depth: usize) -> Value {
    let mut v = json!({});
    for _ in 1..depth {
        v = json!({ "Nest": v });
    }
    v
}

pub async fn deep(ctx: &Ctx, p: &mut Probe) {
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let with_depth = |depth: usize| {
        let mut v = plain(ctx);
        v["DataXMData"] = json!({
            "DataID": uuid::Uuid::new_v4().to_string(),
            "Source": [{"AIMID": "CERTIFY"}],
            "Nest": nested(depth),
        });
        v
    };
    // The deep Requests are kept as evidence in words: nested that deep, a report or a
    // session holding them could not be read back by most JSON readers (nor by a session
    // load, beyond 1,000 levels).
    let sent = d.send(p, with_depth(900)).await;
    described(
        p,
        "a Request whose DataXMData is nested 900 levels deep",
        &sent,
    );
    p.answered(
        &sent,
        "a conformant Request whose DataXMData is nested 900 levels deep",
    );
    let request =
        d.d.prepare(with_depth(1200), crate::client::dialogue::Filling::Missing);
    let turn = d.d.next_turn();
    // Any answer will do, or none: what matters is what follows. A server that stays silent
    // is waited for 2 s, not the whole --timeout.
    let what = "a Request whose DataXMData is nested 1,200 levels deep";
    let wait = BEYOND_WAIT.min(ctx.options.timeout);
    match tokio::time::timeout(wait, d.send_prepared(p, request, false)).await {
        Ok(sent) => described(p, what, &sent),
        Err(_) => p.evidence.push(crate::certify::Evidence::Raw {
            transport: "MCP".into(),
            sent: what.into(),
            received: format!("(no answer within {} s)", wait.as_secs_f64()),
        }),
    }
    // After a Request the server may have taken: the next TurnIndex (gaps are allowed).
    let next = d.filled_at(plain(ctx), turn + 1);
    let sent = d.send_prepared(p, next, true).await;
    p.answered(
        &sent,
        "a normal Request after one nested 1,200 levels deep, on the same connection",
    );
    d.close().await;
}
