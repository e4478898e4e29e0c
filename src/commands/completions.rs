//! `stripebench completions SHELL`: the completion script clap_complete
//! makes from the arranged command line (cli::help), so that it never
//! drifts from the options it completes.

use anyhow::Result;

use crate::cli::CompletionsArgs;

pub fn run(args: &CompletionsArgs) -> Result<u8> {
    let mut cmd = crate::cli::help::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "stripebench", &mut script);
    crate::output::stdout::bytes(&script);
    Ok(crate::base::error::EXIT_OK)
}
