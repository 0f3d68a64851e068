fn main() {
    taskie::cli::hook_main();
}
