//! The datasets compiled into the binary (`datasets/v1/*.json`), prepared once here:
//!
//! * their fingerprints, instead of hashing their 9.4 MB on every run (6 % of an offline
//!   re-score). They are the sha256 of the files as committed, the uncompressed bytes, so
//!   reports and baseline pins do not depend on how the binary stores them.
//! * a zstd frame of each file (level 12), which the binary embeds instead of the text (9.4 MB of
//!   JSON become 0.9 MB) and decompresses once, on first use (`dataset::embedded`).
//!
//! `dataset::tests` checks both against the files in `datasets/v1/`.

use sha2::{Digest, Sha256};

/// zstd's level: 12 packs v1 into 0.87 MB in about a second; 19 saves another 70 KB and takes
/// 15 s or more on every build that changes a dataset.
const LEVEL: i32 = 12;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut code = String::new();
    for (name, file) in [
        ("CORPUS", "corpus"),
        ("GOLDEN", "golden"),
        ("SECURITY", "security"),
    ] {
        let path = format!("datasets/v1/{file}.json");
        println!("cargo::rerun-if-changed={path}");
        // read as text: the binary hands the decompressed bytes out as `&str` without checking
        // them again, so they must be UTF-8 here
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let hex: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        code += &format!("pub const {name}_SHA256: &str = {hex:?};\n");
        code += &format!("const {name}_LEN: usize = {};\n", text.len());
        let packed = zstd::bulk::compress(text.as_bytes(), LEVEL)
            .unwrap_or_else(|e| panic!("{path}: zstd: {e}"));
        std::fs::write(out.join(format!("{file}.json.zst")), packed).expect("OUT_DIR is writable");
    }
    std::fs::write(out.join("embedded_sha256.rs"), code).expect("OUT_DIR is writable");
}
