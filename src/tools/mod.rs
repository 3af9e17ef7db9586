//! Side tools beside the evaluation, built on the same pipeline pieces: a reference
//! tool-search proxy (`evalgate proxy`) and the corpus snapshotter (`evalgate corpus snapshot`).

pub mod proxy;
pub mod snapshot;
