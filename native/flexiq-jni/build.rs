//! Cross-linking for macOS from another OS, where no macOS SDK is at hand: sqlx's user-name
//! lookup (the `whoami` crate) links the CoreFoundation and SystemConfiguration frameworks,
//! which every macOS has. `macos-frameworks/` holds stubs naming their install paths and the
//! few functions `whoami` declares, so that the linker can record them as any SDK would.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=macos-frameworks");
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let host = env::var("HOST").unwrap_or_default();
    if target_os == "macos" && !host.contains("apple") {
        let stubs = concat!(env!("CARGO_MANIFEST_DIR"), "/macos-frameworks");
        println!("cargo:rustc-link-arg-cdylib=-F{stubs}");
    }
}
