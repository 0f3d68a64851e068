fn main() -> std::process::ExitCode {
    taskie::cli::main()
}
