//! `stripebench man [SUBCOMMAND]`: the man page clap_mangen renders from
//! the arranged command line (cli::help): stripebench(1), or
//! stripebench-SUBCOMMAND(1) with its options, sections and examples.

use anyhow::Result;

use crate::base::error::usage;
use crate::cli::ManArgs;

pub fn run(args: &ManArgs) -> Result<u8> {
    let root = crate::cli::help::command();
    let names: Vec<&str> = root
        .get_subcommands()
        .map(|s| s.get_name())
        .filter(|n| *n != "help")
        .collect();
    if args.list {
        crate::output::stdout::text(&(names.join("\n") + "\n"));
        return Ok(crate::base::error::EXIT_OK);
    }
    let page = match &args.subcommand {
        None => root,
        Some(name) => {
            let Some(sub) = root.find_subcommand(name) else {
                return usage(format!(
                    "man: no subcommand '{}': give one of {}",
                    crate::base::error::show_text(name),
                    names.join(", ")
                ));
            };
            // The page's name and its usage line: `stripebench-run`, as
            // `man stripebench-run` finds it.
            let full = format!("stripebench-{}", sub.get_name());
            sub.clone()
                .name(full.clone())
                .bin_name(format!("stripebench {}", sub.get_name()))
                .display_name(full)
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    // The examples as lines of their own (clap_mangen would fill them
    // into one paragraph under "EXTRA").
    let examples = page.get_after_help().map(|h| h.to_string());
    let page = page.after_help(clap::builder::Resettable::<clap::builder::StyledStr>::Reset);
    let mut roff = Vec::new();
    clap_mangen::Man::new(page).render(&mut roff)?;
    if let Some(ex) = examples {
        roff.extend_from_slice(examples_section(&ex).as_bytes());
    }
    crate::output::stdout::bytes(&roff);
    Ok(crate::base::error::EXIT_OK)
}

/// An EXAMPLES section of preformatted lines (the help's "Examples:" block).
fn examples_section(help: &str) -> String {
    let mut out = String::from(".SH EXAMPLES\n.nf\n");
    for line in help.lines().skip_while(|l| l.trim() == "Examples:") {
        let l = line.trim_start().replace('\\', "\\\\").replace('-', "\\-");
        // A line starting with '.' or '\'' would be a roff request.
        if l.starts_with('.') || l.starts_with('\'') {
            out.push_str("\\&");
        }
        out.push_str(&l);
        out.push('\n');
    }
    out.push_str(".fi\n");
    out
}
