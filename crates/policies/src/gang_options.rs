//! `kube`'s gang options as given (`timeout`, `quota`, Coscheduling's `reject` and
//! `backoff`, Kueue's `backoff`, `backoff_limit`, `kueue_api`, `block_admission` and
//! `requeue`; see the `OptionInfo`s in [`crate::kube`]): checked against the gang mode
//! they belong to, written back into the spec as given, and turned into the Coscheduling
//! and Kueue configurations.

use crate::coscheduling::Coscheduling;
use crate::kube::{BACKOFF, BACKOFF_LIMIT, BLOCK_ADMISSION, GangMode, KUEUE_API, QUOTA, REJECT, REQUEUE, TIMEOUT};
use crate::kueue::{BACKOFF_BASE_SECS, KueueApi, KueueConfig, RequeueTimestamp};
use crate::options::Chosen;
use crate::spec::{PolicyError, PolicySpec};

/// The gang options a spec gave (`None`: not given, the default applies).
#[derive(Debug, Clone, Default)]
pub struct GangOptions {
    /// `timeout=`.
    pub timeout: Option<u64>,
    /// `quota=`.
    pub quota: Option<u64>,
    /// `reject=`.
    pub reject: Option<u64>,
    /// `backoff=`.
    pub backoff: Option<u64>,
    /// `backoff_limit=`.
    pub backoff_limit: Option<u64>,
    /// `kueue_api=`.
    pub kueue_api: Option<KueueApi>,
    /// `block_admission=` (`per-api` reads as not given).
    pub block_admission: Option<bool>,
    /// `requeue=`.
    pub requeue: Option<RequeueTimestamp>,
}

impl GangOptions {
    /// Reads them from a checked spec; one of the newer options given with a gang mode it
    /// does not belong to, or a percentage over 100, is an error.
    pub fn read(c: &Chosen<'_>, spec: &PolicySpec, gang: GangMode) -> Result<Self, PolicyError> {
        let given = |o: crate::options::OptionInfo| spec.options.contains_key(o.key);
        let wrong = |key: &str, modes: &str| PolicyError::Malformed {
            spec: crate::options::spec_text(spec),
            what: format!("{key} applies only with gang={modes}"),
        };
        // `timeout` and `quota` are taken with any mode, as they always were.
        for o in [BACKOFF_LIMIT, KUEUE_API, BLOCK_ADMISSION, REQUEUE] {
            if given(o) && gang != GangMode::Kueue {
                return Err(wrong(o.key, "kueue"));
            }
        }
        if given(REJECT) && gang != GangMode::PermitWait {
            return Err(wrong(REJECT.key, "permit-wait"));
        }
        if given(BACKOFF) && !matches!(gang, GangMode::PermitWait | GangMode::Kueue) {
            return Err(wrong(BACKOFF.key, "permit-wait or gang=kueue"));
        }
        let reject = c.number(REJECT);
        if reject.is_some_and(|r| r > 100) {
            return Err(PolicyError::Malformed {
                spec: crate::options::spec_text(spec),
                what: "reject is a percentage, 0 to 100".into(),
            });
        }
        Ok(GangOptions {
            timeout: c.number(TIMEOUT),
            quota: c.number(QUOTA),
            reject,
            backoff: c.number(BACKOFF),
            backoff_limit: c.number(BACKOFF_LIMIT),
            kueue_api: given(KUEUE_API).then(|| [KueueApi::V1beta2, KueueApi::V1beta1][c.index(KUEUE_API)]),
            block_admission: [None, Some(true), Some(false)][c.index(BLOCK_ADMISSION)],
            requeue: given(REQUEUE).then(|| [RequeueTimestamp::Eviction, RequeueTimestamp::Creation][c.index(REQUEUE)]),
        })
    }

    /// The options given, as `key=value` in the order of `kube`'s option table, for the
    /// canonical spec (numbers first, as before these options existed).
    pub fn given(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut num = |key: &str, n: Option<u64>| {
            if let Some(n) = n {
                v.push(format!("{key}={n}"));
            }
        };
        num(TIMEOUT.key, self.timeout);
        num(QUOTA.key, self.quota);
        num(REJECT.key, self.reject);
        num(BACKOFF.key, self.backoff);
        num(BACKOFF_LIMIT.key, self.backoff_limit);
        if let Some(a) = self.kueue_api {
            v.push(format!("{}={}", KUEUE_API.key, KUEUE_API.values[a as usize]));
        }
        if let Some(b) = self.block_admission {
            v.push(format!("{}={b}", BLOCK_ADMISSION.key));
        }
        if let Some(r) = self.requeue {
            v.push(format!("{}={}", REQUEUE.key, REQUEUE.values[r as usize]));
        }
        v
    }

    /// Coscheduling's configuration (`gang=permit-wait`).
    pub fn coscheduling(&self) -> Coscheduling {
        Coscheduling::new(self.timeout, self.reject, self.backoff)
    }

    /// The ClusterQueue's configuration (`gang=kueue`): the API's defaults, replaced by
    /// what was given.
    pub fn kueue(&self) -> KueueConfig {
        let api = self.kueue_api.unwrap_or(KueueApi::V1beta2);
        let d = KueueConfig::defaults(api);
        KueueConfig {
            timeout: api.timeout(self.timeout),
            block_admission: self.block_admission.unwrap_or(d.block_admission),
            requeue: self.requeue.unwrap_or(d.requeue),
            backoff_base_secs: self.backoff.unwrap_or(BACKOFF_BASE_SECS),
            backoff_limit: self.backoff_limit.map(|l| l.min(u32::MAX as u64) as u32),
            quota_percent: self.quota.unwrap_or(100),
        }
    }
}
