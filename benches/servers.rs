//! Reference server speed (issues 3 and 4):
//! - the server-side time of a 10-step feasibility Request (target: under 50 µs);
//! - sequential turns per second in one dialogue over stdio (target: 5,000/s for both servers)
//!   and over HTTP (target: 1,500/s for Domain Access), client and server on this machine.

use bkn_explorer::protocol::Interface;
use bkn_explorer::protocol::dac::DacRequest;
use bkn_explorer::protocol::message::{CommonDefaults, Fill, fill_request, new_id};
use bkn_explorer::server::dac::domain::Domain;
use bkn_explorer::server::dac::{DacDialogue, DomainAccess};
use bkn_explorer::server::usr::UserStateRefinement;
use bkn_explorer::server::usr::users::Users;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::cell::Cell;
use std::hint::black_box;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};

const PLAN: [&str; 10] = [
    "MM-Add Nil Kiosk#3 At MLoc:Square.Stage",
    "MM-Move Nil Kiosk#3 From MLoc:Square.Stage To MLoc:Square.Walkway",
    "MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage",
    "Post Nil Artwork#6 To Process#Market",
    "Hide Nil Bench#2",
    "MM-Move Nil Bench#2 To MLoc:Square.Gate",
    "MM-Add Nil Artwork#6 At MLoc:Square.Corner",
    "Convert Nil Artwork#5 With Format=glTF",
    "Post Nil Item#12 To Process#Market",
    "MM-Move Nil Avatar#7 To MLoc:Museum.Hall",
];

fn feasibility(c: &mut Criterion) {
    let server = DomainAccess::new(Domain::default_domain(), Default::default());
    let mut request = DacRequest::new(
        bkn_explorer::protocol::dac::Kind::Feasibility,
        "d",
        0,
        &CommonDefaults::default(),
    );
    request.process_actions = Some(
        PLAN.iter()
            .enumerate()
            .map(|(i, s)| bkn_explorer::protocol::dac::ProcessActionStep {
                step: (i as u64).into(),
                statement: s.to_string(),
            })
            .collect(),
    );
    let mut group = c.benchmark_group("server side");
    group.bench_function("10-step feasibility", |b| {
        b.iter(|| {
            let mut dialogue = DacDialogue::default();
            server.respond(&mut dialogue, black_box(&request))
        })
    });
    // A whole turn inside the server: the checks, the answer, the Response as JSON.
    use bkn_explorer::server::mcp::Backend;
    let usr = UserStateRefinement::new(Users::default_users());
    let mut body = json!({"UserID": "User#Ana", "Feedback": {"Hypothesis": "Emotion is curious", "Conflicts": ["smiled"]}})
        .as_object()
        .unwrap()
        .clone();
    fill_request(
        &mut body,
        Interface::Usr,
        "d",
        0,
        &CommonDefaults::default(),
        Fill::Missing,
    );
    let usr_request = Value::Object(body);
    group.bench_function("usr answer", |b| {
        let mut dialogue = Default::default();
        b.iter(|| usr.answer(&mut dialogue, black_box(&usr_request)))
    });
    group.finish();
}

type Client = RunningService<RoleClient, ()>;

async fn stdio_client(which: &str) -> Client {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_bkn-explorer")).configure(|c| {
        c.args(["serve", which, "--log-level", "error"]);
    });
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ().serve(transport).await.unwrap()
}

async fn http_server(which: &str) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_bkn-explorer"))
        .args(["serve", which, "--http", "0", "--log-level", "error"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the server listens");
        if let Some(at) = line.find("http://") {
            break line[at..].trim().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

/// One dialogue's turns, each a fresh Request with the next TurnIndex.
struct Turns {
    interface: Interface,
    body: Value,
    dialog_id: String,
    next: Cell<u64>,
    defaults: CommonDefaults,
}

impl Turns {
    fn new(interface: Interface, body: Value) -> Turns {
        Turns {
            interface,
            body,
            dialog_id: new_id(),
            next: Cell::new(0),
            defaults: CommonDefaults::default(),
        }
    }

    async fn one(&self, client: &Client) {
        let mut request = self.body.as_object().unwrap().clone();
        let turn = self.next.get();
        self.next.set(turn + 1);
        fill_request(
            &mut request,
            self.interface,
            &self.dialog_id,
            turn,
            &self.defaults,
            Fill::Missing,
        );
        let result = client
            .call_tool(
                CallToolRequestParams::new(self.interface.tool_name()).with_arguments(request),
            )
            .await
            .unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
        black_box(result);
    }
}

fn turns(c: &mut Criterion) {
    // One thread for the client: a turn is then never handed between threads on this side.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dac_body = json!({"Kind": "constraints", "EntityIDs": ["Fountain#1", "Avatar#7"]});
    let usr_body = json!({"UserID": "User#Ana", "Feedback": {"Hypothesis": "Emotion is curious", "Conflicts": ["smiled"]}});
    let mut group = c.benchmark_group("sequential turns");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(5));

    for (which, interface, body) in [
        ("dac", Interface::Dac, &dac_body),
        ("usr", Interface::Usr, &usr_body),
    ] {
        let client = rt.block_on(stdio_client(which));
        let turns = Turns::new(interface, body.clone());
        group.bench_function(format!("{which} over stdio"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        turns.one(&client).await;
                    }
                    start.elapsed()
                })
            })
        });
        rt.block_on(async { client.cancel().await.ok() });

        let (_child, url) = rt.block_on(http_server(which));
        let client: Client = rt.block_on(async {
            ().serve(StreamableHttpClientTransport::from_uri(url))
                .await
                .unwrap()
        });
        let turns = Turns::new(interface, body.clone());
        group.bench_function(format!("{which} over HTTP"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        turns.one(&client).await;
                    }
                    start.elapsed()
                })
            })
        });
        rt.block_on(async { client.cancel().await.ok() });
    }
    group.finish();
}

criterion_group!(benches, feasibility, turns);
criterion_main!(benches);
