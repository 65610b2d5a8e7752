fn main() -> std::process::ExitCode {
    bkn_explorer::cli::main()
}
