//! The `repromin` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    repromin::cli::run(std::env::args_os())
}
