//! See `src/report_renderers.rs` (the body, shared with the stable seed replay) and fuzz/README.md.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalgate_fuzz::report_renderers::run(data));
