//! Quality of service: `sacctmgr show qos format=name,priority,preempt,preemptmode,
//! gracetime,usagefactor,maxjobsperuser,grptres -P` as the `--qos` file.
//!
//! Sources (Slurm 24.05): `doc/html/qos.shtml` (QOS priority, `Preempt`, `PreemptMode`,
//! `GraceTime`, `UsageFactor`, limits), `doc/html/resource_limits.shtml` (`MaxJobsPerUser`,
//! `GrpTRES`, `MaxTRESPerJob`, `MaxWall`, and the pending reasons they give),
//! `sacctmgr(1)` (the column names `sacctmgr` prints: `Name`, `Priority`, `Preempt`,
//! `PreemptMode`, `GraceTime`, `UsageFactor`, `MaxJobsPU`, `GrpTRES`, `MaxTRES`, `MaxWall`).
//!
//! Columns are found by name, case-insensitively (`MaxJobsPerUser` and `MaxJobsPU`,
//! `MaxTRESPerJob` and `MaxTRES` alike); only `Name` is required; a missing column or a
//! blank field takes Slurm's default: priority 0, preempts nothing, `PreemptMode=cluster`
//! (the slurm.conf's), `GraceTime` 0, `UsageFactor` 1, no limits. Without a `--qos` file
//! every job runs under Slurm's default QOS `normal` with those defaults.

use super::conf::{PreemptMode, parse_time};
use sim_core::time::SimDuration;

/// Trackable resources a limit counts (`GrpTRES`, `MaxTRESPerJob`): CPUs, GPUs, nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tres {
    /// `cpu=`.
    pub cpu: Option<u64>,
    /// `gres/gpu=`.
    pub gpu: Option<u64>,
    /// `node=`.
    pub node: Option<u64>,
}

impl Tres {
    /// Reads `cpu=256,gres/gpu=8,node=4` (other TRES are kept out: not modelled).
    pub fn parse(v: &str) -> Result<Tres, String> {
        let mut t = Tres::default();
        for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, n) = item.split_once('=').ok_or_else(|| format!("expected TRES=count, found '{item}'"))?;
            let n: u64 = n.parse().map_err(|_| format!("expected a whole number for {k}, found '{n}'"))?;
            match k.to_ascii_lowercase().as_str() {
                "cpu" => t.cpu = Some(n),
                "gres/gpu" => t.gpu = Some(n),
                "node" => t.node = Some(n),
                _ => {}
            }
        }
        Ok(t)
    }
}

/// One QOS.
#[derive(Debug, Clone, PartialEq)]
pub struct QosDef {
    /// `Name`.
    pub name: String,
    /// `Priority` (the QOS factor is this over the largest QOS priority).
    pub priority: u32,
    /// `Preempt`: the QOSes (by index) whose jobs this QOS's jobs may preempt.
    pub preempt: Vec<usize>,
    /// `PreemptMode`; `None`: `cluster`, the slurm.conf's.
    pub preempt_mode: Option<PreemptMode>,
    /// `GraceTime`: how long a preempted job may still run.
    pub grace_time: SimDuration,
    /// `UsageFactor`: usage charged to fair share is multiplied by it.
    pub usage_factor: f64,
    /// `MaxJobsPerUser` (`MaxJobsPU`): running jobs per user.
    pub max_jobs_per_user: Option<u32>,
    /// `GrpTRES`: all running jobs of the QOS together.
    pub grp_tres: Tres,
    /// `MaxTRESPerJob` (`MaxTRES`).
    pub max_tres_per_job: Tres,
    /// `MaxWall`: the longest time limit a job may have.
    pub max_wall: Option<SimDuration>,
}

impl QosDef {
    /// Slurm's default QOS `normal`.
    pub fn normal() -> QosDef {
        QosDef::named("normal")
    }

    fn named(name: &str) -> QosDef {
        QosDef {
            name: name.to_string(),
            priority: 0,
            preempt: Vec::new(),
            preempt_mode: None,
            grace_time: SimDuration::ZERO,
            usage_factor: 1.0,
            max_jobs_per_user: None,
            grp_tres: Tres::default(),
            max_tres_per_job: Tres::default(),
            max_wall: None,
        }
    }
}

/// Reads a `sacctmgr show qos ... -P` listing (`-p`, with a trailing `|`, too).
///
/// # Errors
///
/// A message naming the file, the line, the column and what was expected.
pub fn parse_qos(text: &str, file: &str) -> Result<Vec<QosDef>, String> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(format!("{file}: expected a header line such as Name|Priority|Preempt, found nothing"));
    };
    let mut names: Vec<String> = header.split('|').map(|s| s.trim().to_ascii_lowercase()).collect();
    if names.len() > 1 && names.last().is_some_and(String::is_empty) {
        names.pop();
    }
    let col = |alts: &[&str]| names.iter().position(|n| alts.contains(&n.as_str()));
    let name_col = col(&["name"]).ok_or_else(|| format!("{file} line 1: expected a Name column, found '{header}'"))?;
    let cols = [
        col(&["priority"]),
        col(&["preempt"]),
        col(&["preemptmode"]),
        col(&["gracetime"]),
        col(&["usagefactor"]),
        col(&["maxjobsperuser", "maxjobspu"]),
        col(&["grptres"]),
        col(&["maxtresperjob", "maxtres"]),
        col(&["maxwall", "maxwalldurationperjob"]),
    ];
    let mut out: Vec<QosDef> = Vec::new();
    let mut preempt_names: Vec<(usize, Vec<String>)> = Vec::new();
    for (line, text) in lines {
        let fields: Vec<&str> = text.split('|').map(str::trim).collect();
        let field = |c: Option<usize>| c.and_then(|c| fields.get(c).copied()).unwrap_or("");
        let bad = |c: usize, expected: &str, found: &str| {
            format!("{file} line {line}, column {}: expected {expected}, found \"{found}\"", names[c])
        };
        let name = field(Some(name_col));
        if name.is_empty() {
            return Err(bad(name_col, "a QOS name", name));
        }
        let mut q = QosDef::named(name);
        let number = |i: usize| -> Result<Option<u64>, String> {
            let v = field(cols[i]);
            if v.is_empty() {
                Ok(None)
            } else {
                v.parse().map(Some).map_err(|_| bad(cols[i].unwrap(), "a whole number", v))
            }
        };
        q.priority = number(0)?.unwrap_or(0).min(u64::from(u32::MAX)) as u32;
        preempt_names.push((line, field(cols[1]).split(',').filter(|s| !s.is_empty()).map(String::from).collect()));
        q.preempt_mode = match field(cols[2]).to_ascii_lowercase().as_str() {
            "" | "cluster" => None,
            "off" => Some(PreemptMode::Off),
            "cancel" => Some(PreemptMode::Cancel),
            "requeue" => Some(PreemptMode::Requeue),
            "suspend" => Some(PreemptMode::Suspend),
            v => return Err(bad(cols[2].unwrap(), "cluster, off, cancel, requeue or suspend", v)),
        };
        let time = |i: usize| -> Result<Option<SimDuration>, String> {
            let v = field(cols[i]);
            if v.is_empty() { Ok(None) } else { parse_time(v).map_err(|e| bad(cols[i].unwrap(), &e, v)) }
        };
        q.grace_time = time(3)?.unwrap_or(SimDuration::ZERO);
        let uf = field(cols[4]);
        if !uf.is_empty() {
            q.usage_factor = uf
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite() && *f >= 0.0)
                .ok_or_else(|| bad(cols[4].unwrap(), "a number ≥ 0", uf))?;
        }
        q.max_jobs_per_user = number(5)?.map(|n| n.min(u64::from(u32::MAX)) as u32);
        q.grp_tres = Tres::parse(field(cols[6])).map_err(|e| bad(cols[6].unwrap(), &e, field(cols[6])))?;
        q.max_tres_per_job = Tres::parse(field(cols[7])).map_err(|e| bad(cols[7].unwrap(), &e, field(cols[7])))?;
        q.max_wall = time(8)?;
        if out.iter().any(|o| o.name == q.name) {
            return Err(bad(name_col, "a name not listed before", name));
        }
        out.push(q);
    }
    for (i, (line, list)) in preempt_names.into_iter().enumerate() {
        for n in list {
            let at = out.iter().position(|q| q.name == n).ok_or_else(|| {
                format!("{file} line {line}, column preempt: expected a QOS listed in the file, found \"{n}\"")
            })?;
            out[i].preempt.push(at);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sacctmgr_columns_by_name_with_defaults() {
        let text = "Name|Priority|Preempt|PreemptMode|GraceTime|UsageFactor|MaxJobsPU|GrpTRES|MaxTRES|MaxWall\n\
                    normal|0||cluster|00:00:00|1.000000||||\n\
                    high|100|normal,scavenger|requeue|00:02:00|2.000000|4|cpu=64,gres/gpu=8||1-00:00:00\n\
                    scavenger|0||cancel||0.500000|||node=2|\n";
        let q = parse_qos(text, "qos.txt").unwrap();
        assert_eq!(q.len(), 3);
        assert_eq!((q[0].priority, q[0].preempt_mode, q[0].usage_factor), (0, None, 1.0));
        assert_eq!(q[1].preempt, [0, 2]);
        assert_eq!(q[1].preempt_mode, Some(PreemptMode::Requeue));
        assert_eq!(q[1].grace_time, SimDuration::from_secs(120));
        assert_eq!((q[1].max_jobs_per_user, q[1].grp_tres.cpu, q[1].grp_tres.gpu), (Some(4), Some(64), Some(8)));
        assert_eq!(q[1].max_wall, Some(SimDuration::from_secs(86_400)));
        assert_eq!((q[2].preempt_mode, q[2].max_tres_per_job.node), (Some(PreemptMode::Cancel), Some(2)));
        // Only the name is required.
        assert_eq!(parse_qos("name\nx\n", "q").unwrap()[0], QosDef::named("x"));
    }

    #[test]
    fn bad_values_name_file_line_and_column() {
        let e = parse_qos("Name|Priority\nhigh|lots\n", "qos.txt").unwrap_err();
        assert_eq!(e, "qos.txt line 2, column priority: expected a whole number, found \"lots\"");
        let e = parse_qos("Name|Preempt\nhigh|nope\n", "qos.txt").unwrap_err();
        assert!(e.starts_with("qos.txt line 2, column preempt: expected a QOS listed"), "{e}");
        assert!(parse_qos("Priority\n1\n", "q").unwrap_err().contains("Name column"));
    }
}
