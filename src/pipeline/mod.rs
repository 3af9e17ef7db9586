//! The evaluation, stage by stage, in the order data flows: a stage may use the stages above
//! it in this list, never one below.
//!
//! `dataset` (load and validate the frozen files) → `replay` (serve the corpus as real MCP
//! servers) → `sut` (the systems under test, launched or in-process, and the detectors) →
//! `measure` (ask every query, scan every entry; what came back) → `score` (pure metrics and
//! statistics) → `baseline` (the committed reference) → `gate` (the verdict) → `report` (one
//! model, one view, many renderers) → `publish` (the pull-request surface).

pub mod baseline;
pub mod dataset;
pub mod gate;
pub mod measure;
pub mod publish;
pub mod replay;
pub mod report;
pub mod score;
pub mod sut;
