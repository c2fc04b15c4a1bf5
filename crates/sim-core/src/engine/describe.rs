//! The decision log's words for starts, waits and bindings.

use crate::binding::Binding;
use crate::policy::{StartReason, WaitReason};
use crate::time::secs_string;

pub(super) fn describe_binding(binding: &Binding) -> String {
    binding
        .iter()
        .map(|b| {
            let gpus: Vec<String> = b.gpus.iter().map(|g| g.to_string()).collect();
            if gpus.is_empty() {
                format!("node {}", b.node.0)
            } else {
                format!("node {} gpu {}", b.node.0, gpus.join("+"))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn describe_start(r: StartReason) -> String {
    match r {
        StartReason::HeadFits => "head of the queue fits".into(),
        StartReason::BackfillEndsBeforeShadow { shadow } => {
            format!("backfilled: ends by its estimate before the head's reservation at {}", secs_string(shadow.0))
        }
        StartReason::BackfillExtraUnits { extra_left } => {
            format!("backfilled: uses only units the head's reservation leaves over ({extra_left} extra left)")
        }
        StartReason::BackfillPlacementNow => "backfilled: a placement now avoids the head's reserved nodes".into(),
        StartReason::ReservationNow => "its reservation starts now".into(),
        StartReason::Placed => "placed: it passed the filters and this node scored best".into(),
        StartReason::Other { why } => why,
    }
}

pub(super) fn describe_wait(r: WaitReason) -> String {
    match r {
        WaitReason::HeadReserved { at, free } => {
            format!("head of the queue does not fit ({free} units free); reserved at {}", secs_string(at.0))
        }
        WaitReason::Reserved { at } => format!("reserved at {}", secs_string(at.0)),
        WaitReason::DoesNotFit { free } => {
            format!("head of the queue does not fit ({free} units free)")
        }
        WaitReason::Other { why } => why,
    }
}
