//! Emits an rpath to the libtorch directory so that the crate's tests, examples and benches run
//! without `LD_LIBRARY_PATH`. torch-sys (`links = "tch"`) exports `DEP_TCH_LIBTORCH_LIB` to
//! packages that depend on it directly.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
