//! See `src/result_mappers.rs` (the body, shared with the stable seed replay) and fuzz/README.md.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalgate_fuzz::result_mappers::run(data));
