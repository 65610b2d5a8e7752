//! `certify` against the reference Domain Access (issue 28): a full run's wall time over
//! stdio and Streamable HTTP, and how it grows with the size of the published domain. The
//! built-in public square is published at 1, 4, 16 and 64 times its size (its Square and
//! Market copied with every M-Location and Item in them, all within reach), each served by
//! `serve dac --domain FILE`; each size is certified twice per transport, alternating, in
//! one run. `cargo bench --bench certify` prints a table; docs/performance.md keeps the
//! figures.

use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_bkn-explorer");
const SIZES: [usize; 4] = [1, 4, 16, 64];
const ROUNDS: usize = 2;

/// The public square with its Square and Market copied `times - 1` times.
fn domain(times: usize) -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/server/dac/public-square.json"
    ))
    .expect("the built-in domain");
    let mut d: Value = serde_json::from_str(&text).expect("JSON");
    let spaces: Vec<Value> = d["Spaces"].as_array().unwrap().clone();
    let items: Vec<Value> = d["Items"].as_array().unwrap().clone();
    for copy in 2..=times {
        for space in spaces.iter().filter(|s| s["SpaceID"] != "Space:Museum") {
            let mut s = space.clone();
            let rename = |id: &str| format!("{id}-{copy}");
            s["SpaceID"] = json!(rename(space["SpaceID"].as_str().unwrap()));
            for loc in s["MLocations"].as_array_mut().unwrap() {
                let id = loc["MLocationID"].as_str().unwrap().to_owned();
                loc["MLocationID"] = json!(rename(&id));
                for item in items.iter().filter(|i| i["Position"] == json!(id)) {
                    let mut i = item.clone();
                    i["ItemID"] = json!(rename(item["ItemID"].as_str().unwrap()));
                    i["Position"] = json!(rename(&id));
                    d["Items"].as_array_mut().unwrap().push(i);
                }
            }
            d["Requester"]["Reach"]
                .as_array_mut()
                .unwrap()
                .push(s["SpaceID"].clone());
            d["Spaces"].as_array_mut().unwrap().push(s);
        }
    }
    d
}

/// Seconds of one full certify run, and its passed/failed/skipped.
fn certify(server: &[&str]) -> (f64, String) {
    let started = Instant::now();
    let out = Command::new(BIN)
        .arg("certify")
        .args(server)
        .args(["--format", "json"])
        .stderr(Stdio::null())
        .output()
        .expect("certify runs");
    let seconds = started.elapsed().as_secs_f64();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        seconds,
        format!("{}/{}/{}", r["passed"], r["failed"], r["skipped"]),
    )
}

fn main() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    println!(
        "{:>5} {:>7} {:>6}  {:>22}  {:>22}",
        "size", "Spaces", "Items", "stdio s (pass/fail/skip)", "HTTP s (pass/fail/skip)"
    );
    for times in SIZES {
        let d = domain(times);
        let path = dir.path().join(format!("domain-{times}.json"));
        std::fs::write(&path, serde_json::to_vec(&d).unwrap()).unwrap();
        let file = path.to_str().unwrap();
        let mut http = Command::new(BIN)
            .args(["serve", "dac", "--http", "127.0.0.1:0", "--domain", file])
            .args(["--log-level", "warn"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let url = {
            use std::io::BufRead;
            let stderr = http.stderr.take().unwrap();
            let mut lines = std::io::BufReader::new(stderr).lines();
            let url = loop {
                let line = lines.next().expect("the server listens").unwrap();
                if let Some(at) = line.find("http://") {
                    break line[at..].trim().to_owned();
                }
            };
            std::thread::spawn(move || for _ in lines {});
            url
        };
        let stdio = format!("{BIN} serve dac --log-level warn --domain {file}");
        let (mut s, mut h) = (Vec::new(), Vec::new());
        let (mut s_v, mut h_v) = (String::new(), String::new());
        for _ in 0..ROUNDS {
            let (t, v) = certify(&["--stdio", &stdio]);
            s.push(t);
            s_v = v;
            let (t, v) = certify(&["--url", &url]);
            h.push(t);
            h_v = v;
        }
        let _ = http.kill();
        let _ = http.wait();
        let best = |v: &[f64]| v.iter().cloned().fold(f64::MAX, f64::min);
        println!(
            "{:>4}x {:>7} {:>6}  {:>10.2} ({:>9})  {:>10.2} ({:>9})",
            times,
            d["Spaces"].as_array().unwrap().len(),
            d["Items"].as_array().unwrap().len(),
            best(&s),
            s_v,
            best(&h),
            h_v
        );
    }
}
