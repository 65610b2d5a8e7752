// mimalloc: a message's turn allocates and frees many small strings and maps (parsing, the
// checks, the record); glibc's malloc spent about 15% of a turn's CPU on them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    bkn_explorer::cli::main()
}
