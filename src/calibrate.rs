//! `sim calibrate probe|sample|import`: hardware and job profiles from NVML or from
//! monitoring logs (the work is in the hw-calibrate crate).

use crate::Failure;
use crate::cli::{ImportArgs, ProbeArgs, SampleArgs};
use hw_calibrate::sample::{GpuSampler, RecordedSamples, Sampled, run_sampled};
use hw_calibrate::{CalibrateError, GpuProfile, HardwareProfile, to_toml};
use std::path::Path;
use std::time::Duration;

fn fail(e: CalibrateError) -> Failure {
    if e.is_bad_input() { Failure::BadInput(e.to_string()) } else { Failure::Other(e.to_string()) }
}

fn watts(w: Option<f64>) -> String {
    w.map_or_else(|| "unknown".to_string(), |w| format!("{w} W"))
}

fn percent(p: Option<f64>) -> String {
    p.map_or_else(|| "unknown".to_string(), |p| format!("{p} %"))
}

fn describe(g: &GpuProfile) -> String {
    let n = g.devices.len();
    let count = if n > 0 { format!(" x{n}") } else { String::new() };
    let curve =
        if g.power_curve.is_empty() { String::new() } else { format!(", {}-point power curve", g.power_curve.len()) };
    format!(
        "  {}{count}: {} MiB, idle {}, max {}{curve}",
        g.model,
        g.memory_mib,
        watts(g.idle_power_w),
        watts(g.max_power_w),
    )
}

fn summary(out: &Path, p: &HardwareProfile) {
    println!("wrote {}: {} GPU model(s) ({})", out.display(), p.gpu.len(), p.origin);
    for g in &p.gpu {
        println!("{}", describe(g));
        if g.idle_power_w.is_none() {
            println!("    idle power unknown: set idle_power_w by hand for energy figures");
        }
    }
}

/// `sim calibrate probe`.
pub fn probe(a: &ProbeArgs) -> Result<(), Failure> {
    let probed = match &a.replay {
        Some(path) => hw_calibrate::probe::probe(&mut hw_calibrate::probe::RecordedProbe::load(path).map_err(fail)?),
        None => hw_calibrate::probe::probe(&mut hw_calibrate::nvml::NvmlProbe::open().map_err(fail)?),
    }
    .map_err(fail)?;
    for n in &probed.notes {
        eprintln!("note: {n}");
    }
    let profile = probed.profile;
    let text = to_toml(&profile, &format!("schedlab hardware profile: sim calibrate probe ({})", profile.origin));
    crate::write_all(&[(&a.out, text)])?;
    summary(&a.out, &profile);
    Ok(())
}

/// `sim calibrate sample`.
pub fn sample(a: &SampleArgs) -> Result<(), Failure> {
    if a.interval_ms == 0 {
        return Err(Failure::BadInput("--interval-ms: expected milliseconds >= 1, found 0".into()));
    }
    let interval = Duration::from_millis(a.interval_ms);
    let shown = a.command.join(" ");
    // The profile, and how the command failed if it did.
    let run = |sampler: &mut dyn GpuSampler| -> Result<(Sampled, Option<String>), Failure> {
        let r = run_sampled(&a.command, interval, sampler).map_err(fail)?;
        let status = r.exit_code.map_or_else(|| "killed by a signal".to_string(), |c| format!("exit status {c}"));
        let via = sampler.source().map(|s| format!(", {s}")).unwrap_or_default();
        let origin = format!("sim calibrate sample of `{shown}` ({status}{via})");
        let mut s = hw_calibrate::sample::job_profile(&sampler.devices(), &r.ticks, r.duration_s, &origin);
        s.job.notes.splice(0..0, sampler.notes());
        Ok((s, (!r.success()).then_some(status)))
    };
    let (sampled, exit) = match (&a.replay, a.command.is_empty()) {
        (Some(path), true) => {
            let rec = RecordedSamples::load(path).map_err(fail)?;
            let what = if rec.command.is_empty() { String::new() } else { format!(" of `{}`", rec.command) };
            (rec.job_profile(&format!("recorded samples{what} ({})", path.display())), None)
        }
        (Some(path), false) => run(&mut RecordedSamples::load(path).map_err(fail)?)?,
        (None, _) => run(&mut hw_calibrate::nvml::NvmlSampler::open().map_err(fail)?)?,
    };
    let j = &sampled.job;
    let text = j.to_toml("schedlab job profile: sim calibrate sample");
    crate::write_all(&[(&a.out, text)])?;
    for n in &j.notes {
        eprintln!("note: {n}");
    }
    println!(
        "wrote {}: {} s, {} samples on {} GPU(s) ({}); peak {} MiB, mean {} MiB ({}); mean utilization {}, mean power {}",
        a.out.display(),
        j.duration_s,
        j.samples,
        j.gpus,
        if j.gpu_model.is_empty() { "none" } else { &j.gpu_model },
        j.peak_memory_mib,
        j.mean_memory_mib,
        sampled.memory.describe(),
        percent(j.mean_util_pct),
        watts(j.mean_power_w)
    );
    match exit {
        Some(status) => Err(Failure::Other(format!(
            "`{shown}` ended with {status}; the profile of its run was written to {}",
            a.out.display()
        ))),
        None => Ok(()),
    }
}

/// `sim calibrate import`.
pub fn import(a: &ImportArgs) -> Result<(), Failure> {
    let imported = hw_calibrate::import::import_file(&a.file).map_err(fail)?;
    for n in &imported.notes {
        eprintln!("note: {}: {n}", a.file.display());
    }
    let name = a.file.display();
    let hw = to_toml(
        &imported.hardware,
        &format!("schedlab hardware profile: sim calibrate import of {name} ({})", imported.format.name()),
    );
    let mut files = vec![(a.out.as_path(), hw)];
    if let Some(j) = &a.job_out {
        let text = imported.job.to_toml(&format!("schedlab job profile: sim calibrate import of {name}"));
        files.push((j.as_path(), text));
    }
    crate::write_all(&files)?;
    println!("{name}: {} readings ({})", imported.readings, imported.format.name());
    summary(&a.out, &imported.hardware);
    if let Some(j) = &a.job_out {
        let jp = &imported.job;
        println!(
            "wrote {}: {} GPU(s), {} s; peak {} MiB, mean utilization {}, mean power {}",
            j.display(),
            jp.gpus,
            jp.duration_s,
            jp.peak_memory_mib,
            percent(jp.mean_util_pct),
            watts(jp.mean_power_w)
        );
    }
    Ok(())
}
