//! Session files at scale (issue 7): load and save of a 10,000-turn session (targets: under
//! 500 ms each, and memory under three times the file size while loading). The memory figure
//! is the peak of live heap bytes, measured by a counting allocator, and printed before the
//! timings.

use bkn_explorer::session::Session;
use criterion::{Criterion, criterion_group, criterion_main};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn big_session() -> Session {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/dac-tour.json");
    let mut session = Session::load(&path).unwrap();
    let turns = session.dialogues[0].turns.clone();
    session.dialogues[0].turns = turns.iter().cycle().take(10_000).cloned().collect();
    session
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.json");
    big_session().save(&path).unwrap();
    let size = std::fs::metadata(&path).unwrap().len() as usize;

    // Memory while loading, from the text in memory to the parsed session.
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let loaded = Session::load(&path).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    let kept = LIVE.load(Ordering::Relaxed) - before;
    println!(
        "10,000-turn session: file {:.1} MiB; loading peaked at {:.1} MiB ({:.2}x the file), the loaded session holds {:.1} MiB ({:.2}x)",
        size as f64 / 1048576.0,
        peak as f64 / 1048576.0,
        peak as f64 / size as f64,
        kept as f64 / 1048576.0,
        kept as f64 / size as f64
    );

    let mut group = c.benchmark_group("10,000-turn session");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("load", |b| b.iter(|| Session::load(&path).unwrap()));
    let out = dir.path().join("out.json");
    group.bench_function("save", |b| b.iter(|| loaded.save(&out).unwrap()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
