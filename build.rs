//! Emits an rpath to the libtorch directory so that the `renju-zero` binary and its tests run
//! without `LD_LIBRARY_PATH`. The direct `torch-sys` dependency (`links = "tch"`) makes Cargo
//! pass `DEP_TCH_LIBTORCH_LIB` to this script.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
