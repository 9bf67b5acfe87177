//! Model loading under bad input: a published model directory whose `config.json`,
//! `model.safetensors` or TorchScript `model.pt` is replaced by arbitrary bytes or mutated (bytes
//! overwritten, truncated; JSON values replaced) always loads or fails with an error naming the
//! file, never a panic or an abort. Cases per property: proptest's default 256,
//! or `PROPTEST_CASES` (scripts/fuzz.sh runs more).

use proptest::prelude::*;
use renju_rules::Rule;
use renju_trainer::config::NetConfig;
use renju_trainer::model::{load_model, publish_model, ModelConfig, CONFIG_FILE, TORCHSCRIPT_FILE, WEIGHTS_FILE};
use renju_trainer::Net;
use std::path::Path;
use std::sync::OnceLock;
use tch::{nn, Device};

/// The three files of a valid tiny 7x7 model, made once.
fn valid_model() -> &'static [(String, Vec<u8>); 3] {
    static FILES: OnceLock<[(String, Vec<u8>); 3]> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let cfg = ModelConfig::new(0, Rule::Renju, 7, NetConfig::preset("tiny").unwrap());
        let vs = nn::VarStore::new(Device::Cpu);
        let _net = Net::new(&vs.root(), &cfg.net, cfg.shape).unwrap();
        let gen = publish_model(dir.path(), &vs, &cfg).unwrap();
        [CONFIG_FILE, WEIGHTS_FILE, TORCHSCRIPT_FILE].map(|f| (f.to_string(), std::fs::read(gen.join(f)).unwrap()))
    })
}

/// Writes the valid model with `file` replaced by `bytes` and loads it both ways. Returns the
/// error texts (empty when both loads succeeded).
fn load_with(file: &str, bytes: &[u8]) -> (Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in valid_model() {
        std::fs::write(dir.path().join(name), if name == file { bytes } else { content }).unwrap();
    }
    let mut errors = Vec::new();
    if let Err(e) = load_model(dir.path(), Device::Cpu) {
        errors.push(format!("{e:#}"));
    }
    if let Err(e) = tch::CModule::load(dir.path().join(TORCHSCRIPT_FILE)) {
        errors.push(e.to_string());
    }
    (errors, dir.path().join(file).display().to_string())
}

fn mutate(mut bytes: Vec<u8>, edits: &[(prop::sample::Index, u8)], cut: Option<prop::sample::Index>) -> Vec<u8> {
    for (i, b) in edits {
        let at = i.index(bytes.len());
        bytes[at] = *b;
    }
    if let Some(c) = cut {
        bytes.truncate(c.index(bytes.len()));
    }
    bytes
}

fn file_of(k: usize) -> &'static str {
    [CONFIG_FILE, WEIGHTS_FILE, TORCHSCRIPT_FILE][k]
}

/// The errors of `load_model` name the file (TorchScript errors come from libtorch as they are).
fn named(errors: &[String], path: &str, file: &str) -> bool {
    file == TORCHSCRIPT_FILE
        || errors.iter().all(|e| e.contains(path) || e.contains(Path::new(path).parent().unwrap().to_str().unwrap()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96), ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_files_never_panic(k in 0usize..3, bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let (errors, path) = load_with(file_of(k), &bytes);
        prop_assert!(named(&errors, &path, file_of(k)), "{errors:?}");
    }

    #[test]
    fn mutated_files_never_panic(
        k in 0usize..3,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let bytes = mutate(valid_model()[k].1.clone(), &edits, cut);
        let (errors, path) = load_with(file_of(k), &bytes);
        prop_assert!(named(&errors, &path, file_of(k)), "{errors:?}");
    }

    /// Structured mutations of `config.json`: one value anywhere in it replaced by another JSON
    /// value (numbers of every size, strings, nulls), so a well-formed file can claim any
    /// architecture.
    #[test]
    fn config_values_replaced_never_panic(which in any::<prop::sample::Index>(), value in prop_oneof![
        any::<i64>().prop_map(serde_json::Value::from),
        (0u64..5000).prop_map(serde_json::Value::from),
        any::<f64>().prop_map(|f| serde_json::json!(f)),
        "[a-z]{0,8}".prop_map(serde_json::Value::from),
        Just(serde_json::Value::Null),
    ]) {
        let mut json: serde_json::Value = serde_json::from_slice(&valid_model()[0].1).unwrap();
        let mut slots = Vec::new();
        collect_pointers(&json, String::new(), &mut slots);
        let ptr = &slots[which.index(slots.len())];
        *json.pointer_mut(ptr).unwrap() = value;
        let (errors, path) = load_with(CONFIG_FILE, json.to_string().as_bytes());
        prop_assert!(named(&errors, &path, CONFIG_FILE), "{errors:?}");
    }
}

/// JSON pointers of every scalar in `v`.
fn collect_pointers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => m.iter().for_each(|(k, v)| collect_pointers(v, format!("{at}/{k}"), out)),
        serde_json::Value::Array(a) => {
            a.iter().enumerate().for_each(|(i, v)| collect_pointers(v, format!("{at}/{i}"), out))
        }
        _ => out.push(at),
    }
}

#[test]
fn the_unmutated_model_loads() {
    let (errors, _) = load_with("none", b"");
    assert!(errors.is_empty(), "{errors:?}");
}
