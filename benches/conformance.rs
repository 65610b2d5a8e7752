//! Message checks per second on realistic messages (the full fixtures are 1-2 KB, the padded
//! ones about 3 KB). Target (issue 2): at least 100,000 checks/s on one core.

use bkn_explorer::protocol::conformance::{check_exchange, check_message, check_sequence};
use bkn_explorer::protocol::schema;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;
use std::hint::black_box;
use std::path::Path;

fn base(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/conformance/bases")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn bench(c: &mut Criterion) {
    schema::warm_up();
    let mut group = c.benchmark_group("message check");
    group.throughput(Throughput::Elements(1));
    for name in ["dac-request", "dac-response", "usr-request", "usr-response"] {
        let message = base(name);
        let size = message.to_string().len();
        group.bench_function(format!("{name} ({size} B, conformant)"), |b| {
            b.iter(|| check_message(black_box(&message), None))
        });
    }
    // A 3 KB Response: more classes, relations and steps.
    let mut big = base("dac-response");
    let classes = big["Answer"]["ObjectClasses"].clone();
    for _ in 0..20 {
        big["Answer"]["ObjectClasses"]
            .as_array_mut()
            .unwrap()
            .extend(classes.as_array().unwrap().clone());
    }
    let size = big.to_string().len();
    group.bench_function(format!("dac-response ({size} B, conformant)"), |b| {
        b.iter(|| check_message(black_box(&big), None))
    });
    let mut broken = base("dac-response");
    broken["Outcome"] = "done".into();
    broken["Answer"]["ObjectClasses"][0]["Confidence"] = 1.5.into();
    broken["Kind"] = "constraints".into();
    group.bench_function("dac-response with 3 findings", |b| {
        b.iter(|| check_message(black_box(&broken), None))
    });
    group.finish();

    let request = base("dac-request");
    let response = base("dac-response");
    c.bench_function("exchange check", |b| {
        b.iter(|| check_exchange(black_box(&request), black_box(&response)))
    });
    let pair = vec![request.clone(), response.clone()];
    c.bench_function("dialogue of one exchange (all three levels)", |b| {
        b.iter(|| check_sequence(black_box(&pair)))
    });

    // The shipped Domain Access tour as it was recorded (ten exchanges of every Kind, with
    // commitments and a ten-step plan): exchanges per second through all three levels, the
    // semantic rules included (issue 12: at least 100,000/s).
    let tour: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/dac-tour.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut messages = Vec::new();
    for turn in tour["dialogues"][0]["turns"].as_array().unwrap() {
        messages.push(turn["request"].clone());
        if let Some(r) = turn.get("response") {
            messages.push(r.clone());
        }
    }
    let exchanges = tour["dialogues"][0]["turns"].as_array().unwrap().len() as u64;
    let mut group = c.benchmark_group("realistic dialogue");
    group.throughput(Throughput::Elements(exchanges));
    group.bench_function(
        format!("dac-tour, {exchanges} exchanges, all three levels"),
        |b| b.iter(|| check_sequence(black_box(&messages))),
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
