//! `sim`: the schedlab command line.
//!
//! Exit status: 0 success; 2 bad input or usage (a trace that cannot be read, an unknown
//! policy or option, a bad flag); 1 any other failure (an output that cannot be written,
//! a policy that makes an invalid decision).

mod args;
mod calibrate;
mod cli;
mod compare;
mod fgd;
mod generate;
mod report;
mod run;
mod sweep;
mod trace_cmd;

use std::process::ExitCode;

/// A failure, with the exit status it maps to.
#[derive(Debug)]
pub enum Failure {
    /// Bad input or usage: exit 2.
    BadInput(String),
    /// Anything else: exit 1.
    Other(String),
}

/// A progress bar of `len` steps on standard error drawn with `template`, hidden (every
/// call a no-op) unless `show`.
pub(crate) fn progress(show: bool, len: u64, template: &str) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(len);
    b.set_style(indicatif::ProgressStyle::with_template(template).expect("valid template"));
    b
}

/// Writes every `(path, text)` whole, or none of them.
pub(crate) fn write_all(files: &[(&std::path::Path, String)]) -> Result<(), Failure> {
    let io = |p: &std::path::Path, e: std::io::Error| Failure::Other(format!("{}: {e}", p.display()));
    let mut done = Vec::new();
    for (p, text) in files {
        let f = runner::output::write_finished(p, |w| std::io::Write::write_all(w, text.as_bytes()));
        done.push((*p, f.map_err(|e| io(p, e))?));
    }
    for (p, f) in done {
        f.rename().map_err(|e| io(p, e))?;
    }
    Ok(())
}

impl From<runner::RunError> for Failure {
    fn from(e: runner::RunError) -> Self {
        match e {
            runner::RunError::BadInput(m) => Failure::BadInput(m),
            runner::RunError::Other(m) => Failure::Other(m),
        }
    }
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
        cli::Command::Trace(cli::TraceCommand::Convert(c)) => trace_cmd::convert(&c),
        cli::Command::Trace(cli::TraceCommand::Stats(s)) => trace_cmd::stats(&s),
        cli::Command::Trace(cli::TraceCommand::Fit(f)) => trace_cmd::fit(&f),
        cli::Command::Trace(cli::TraceCommand::FitFailures(f)) => trace_cmd::fit_failures(&f),
        cli::Command::Gen(g) => generate::gen_workload(&g),
        cli::Command::Calibrate(cli::CalibrateCommand::Probe(p)) => calibrate::probe(&p),
        cli::Command::Calibrate(cli::CalibrateCommand::Sample(s)) => calibrate::sample(&s),
        cli::Command::Calibrate(cli::CalibrateCommand::Import(i)) => calibrate::import(&i),
        cli::Command::Compare(c) => compare::compare(&c),
        cli::Command::Sweep(s) => sweep::sweep(&s),
        cli::Command::Report(r) => report::report(&r),
        cli::Command::Policies => {
            print!("{}", cli::policies_text());
            Ok(())
        }
        cli::Command::Controllers => {
            print!("{}", cli::controllers_text());
            Ok(())
        }
    }
}
