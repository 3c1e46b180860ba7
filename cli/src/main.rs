fn main() -> std::process::ExitCode {
    latchkey_cli::main()
}
