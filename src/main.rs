//! The `repromin` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    let code = repromin::cli::run(std::env::args_os());
    // Nothing runs any more: the guardian of the runs can go (and is reaped here).
    repromin::runner::finish();
    code
}
