//! `sim report`: the runner's report of run folders, and the table.

use crate::Failure;
use crate::cli::ReportArgs;

/// `sim report`.
pub fn report(a: &ReportArgs) -> Result<(), Failure> {
    let runs = runner::report::report(&a.dirs, &a.out)?;
    println!("schedlab report → {}", a.out.display());
    print!("{}", runner::report::comparison_table(&runs));
    Ok(())
}
