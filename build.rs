//! Fingerprints of the datasets compiled into the binary (`datasets/v1/*.json`), computed once
//! here instead of on every run: hashing their 9.4 MB was 6 % of an offline re-score.
//! `dataset::tests` checks them against the embedded text.

use sha2::{Digest, Sha256};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let mut code = String::new();
    for (name, file) in [
        ("CORPUS", "corpus"),
        ("GOLDEN", "golden"),
        ("SECURITY", "security"),
    ] {
        let path = format!("datasets/v1/{file}.json");
        println!("cargo::rerun-if-changed={path}");
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let hex: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        code += &format!("pub const {name}_SHA256: &str = {hex:?};\n");
    }
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("embedded_sha256.rs"), code).expect("OUT_DIR is writable");
}
