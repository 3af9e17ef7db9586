//! The fuzz targets (fuzz/, cargo-fuzz) replayed over their committed seeds on the stable
//! toolchain, so the targets and their oracles are built and run by every test run, with or
//! without nightly. The bodies are the fuzz package's own (`fuzz/src/`); its tests are these:
//! `seeds_<target>` and the comparison of the oracle's hidden-character set with evalgate's.

#[path = "../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod evalgate_fuzz;
