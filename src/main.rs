//! The `stripebench` binary: parse, run, map the outcome to an exit code.
//! The parsing is `cli::front`'s, the running `commands::front`'s.

use std::process::ExitCode;

use stripebench::commands::front;

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        // Not eprintln!: it panics when stderr is gone, and a panic in the
        // hook aborts.
        front::say(format_args!(
            "stripebench: internal error: {info}; please report it"
        ));
    }));
    // As typed, without a --config file's values: what the documents record.
    stripebench::base::invocation::record_argv(std::env::args_os().collect());
    let code = match stripebench::cli::front::invocations(std::env::args_os().collect()) {
        Ok(invocations) => front::run(invocations),
        Err(e) => front::usage_error(&e),
    };
    ExitCode::from(code)
}
