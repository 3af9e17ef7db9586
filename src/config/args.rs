//! What an evaluating command was given: the input of [`super::Settings::resolve`], filled by
//! the command line (flags and their `EVALGATE_*` variables). A setting not given is unset.

use crate::pipeline::dataset::shard::Shard;
use crate::pipeline::dataset::{DatasetPaths, Profile};
use crate::pipeline::measure::probes::RobustnessMode;
use crate::pipeline::report::color::ColorChoice;
use crate::pipeline::sut::kind::{DetectorKind, SutKind};
use crate::pipeline::sut::observe::ObservationsMode;
use std::path::PathBuf;

/// Everything an evaluating command was given (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct EvalArgs {
    pub config: Option<PathBuf>,
    /// `--corpus`, `--golden`, `--security-corpus`, then the files of `--datasets DIR`.
    pub datasets: DatasetPaths,
    pub profile: Option<Profile>,
    pub sut: Option<SutKind>,
    /// The system under test when neither `--sut`, `[sut] kind` nor `--mcpproxy-bin` chooses
    /// one (`EVALGATE_DEFAULT_SUT`; the GitHub Action sets `reference`) [default: embedded].
    pub default_sut: Option<SutKind>,
    pub mcpproxy_bin: Option<PathBuf>,
    pub url: Option<String>,
    pub headers: Vec<String>,
    pub detectors: Option<Vec<DetectorKind>>,
    pub recorded: Option<PathBuf>,
    pub runs: Option<u32>,
    /// `--shard i/n`.
    pub shard: Option<Shard>,
    pub baseline: Option<PathBuf>,
    pub no_baseline: bool,
    pub out: Option<PathBuf>,
    pub timeout: Option<f64>,
    pub concurrency: Option<u32>,
    pub robustness: Option<RobustnessMode>,
    pub quiet: bool,
    /// `--observations`.
    pub observations: Option<ObservationsMode>,
    pub color: ColorChoice,
    /// The flags given on the command line (`--sut`, ...), not by a variable or a default.
    pub given: Vec<String>,
}

impl EvalArgs {
    /// Whether `flag` (`--url`) was given on the command line.
    pub fn given(&self, flag: &str) -> bool {
        self.given.iter().any(|g| g == flag)
    }
}
