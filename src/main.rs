//! `sim`: the schedlab command line.
//!
//! Exit status: 0 success; 2 bad input or usage (a trace that cannot be read, an unknown
//! policy or option, a bad flag); 1 any other failure (an output that cannot be written,
//! a policy that makes an invalid decision).

mod cli;
mod fgd;
mod input;
mod output;
mod run;

use std::process::ExitCode;

/// A failure, with the exit status it maps to.
#[derive(Debug)]
pub enum Failure {
    /// Bad input or usage: exit 2.
    BadInput(String),
    /// Anything else: exit 1.
    Other(String),
}

fn main() -> ExitCode {
    match try_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(Failure::Other(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
    }
}

fn try_main() -> Result<(), Failure> {
    use clap::Parser;
    let args = match cli::Cli::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    match args.command {
        cli::Command::Run(r) => run::run(&r),
        cli::Command::Fgd(f) => fgd::fgd(&f),
        cli::Command::Trace(cli::TraceCommand::Convert(c)) => convert(&c),
        cli::Command::Policies => {
            print!("{}", cli::policies_text());
            Ok(())
        }
    }
}

/// `sim trace convert`: the workload in another format, written whole or not at all.
fn convert(c: &cli::ConvertArgs) -> Result<(), Failure> {
    let (w, _) = input::load(&c.input, c.seed)?;
    let f = output::write_finished(&c.out, |out| match c.to {
        cli::ConvertTo::Native => traces::native::write(out, &w.jobs),
    })
    .map_err(|e| Failure::Other(format!("{}: {e}", c.out.display())))?;
    f.rename().map_err(|e| Failure::Other(format!("{}: {e}", c.out.display())))
}
