//! Inference services: the request rate they are offered ([`rate`]) and the latency their
//! replicas give at that rate ([`latency`]), the parts the service and horizontal
//! autoscaler controllers are built on.

pub mod latency;
pub mod rate;
