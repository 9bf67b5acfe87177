//! Offline checks of the cluster files in `deploy/`: the Kubernetes manifests (`deploy/k8s/`)
//! parsed as YAML and checked for what the binary relies on, and the Slurm scripts
//! (`deploy/slurm/`) checked by `bash -n` (and `shellcheck` when it is installed). Every
//! `renju-zero` command line they contain must name a real subcommand and only flags that the
//! subcommand's `--help` lists.

use renju_zero::pipeline::RunConfig;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use yaml_rust2::{Yaml, YamlLoader};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The variables `object_store`'s builders read (docs/many-machines.md).
const STORE_VARS: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_ALLOW_HTTP",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_STORAGE_ACCOUNT_NAME",
    "AZURE_STORAGE_ACCOUNT_KEY",
];

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join(dir))
        .unwrap_or_else(|e| panic!("reading {dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no *.{ext} in {dir}");
    v
}

/// The long flags `renju-zero <sub> --help` lists; panics on an unknown subcommand.
fn help_flags(sub: &str) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_renju-zero")).args([sub, "--help"]).output().unwrap();
    assert!(out.status.success(), "`renju-zero {sub}` is not a subcommand: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // Option lines: `      --run <RUN>` or `  -h, --help`.
    text.lines()
        .filter_map(|l| l.trim_start().split(", ").last()?.split_whitespace().next())
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(str::to_owned)
        .collect()
}

/// Checks one command line after `renju-zero`: a subcommand from `allowed`, every `--flag` listed
/// by its `--help`. Returns the subcommand.
fn check_command_line(args: &[String], allowed: &[&str], origin: &str) -> String {
    let sub = args.first().unwrap_or_else(|| panic!("{origin}: no renju-zero subcommand"));
    assert!(allowed.contains(&sub.as_str()), "{origin}: subcommand `{sub}` is not one of {allowed:?}");
    let known = help_flags(sub);
    for a in args.iter().filter(|a| a.starts_with("--")) {
        let flag = a.split('=').next().unwrap();
        assert!(known.contains(flag), "{origin}: `renju-zero {sub}` has no flag `{flag}` (it has {known:?})");
    }
    sub.clone()
}

fn str_of<'a>(y: &'a Yaml, what: &str, origin: &str) -> &'a str {
    y.as_str().unwrap_or_else(|| panic!("{origin}: {what} is missing or not a string"))
}

fn keys(y: &Yaml) -> BTreeSet<String> {
    y.as_hash().map(|h| h.keys().filter_map(|k| k.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

/// Every document of every `deploy/k8s/*.yaml`, with its origin (file name and kind/name).
fn manifests() -> Vec<(String, Yaml)> {
    let mut docs = Vec::new();
    for path in files("deploy/k8s", "yaml") {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        for doc in YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}")) {
            let origin = format!(
                "{file}: {} {}",
                doc["kind"].as_str().unwrap_or("?"),
                doc["metadata"]["name"].as_str().unwrap_or("?")
            );
            assert!(doc["apiVersion"].as_str().is_some(), "{origin}: no apiVersion");
            str_of(&doc["kind"], "kind", &origin);
            str_of(&doc["metadata"]["name"], "metadata.name", &origin);
            docs.push((origin, doc));
        }
    }
    docs
}

#[test]
fn kubernetes_manifests_run_real_commands_with_resolved_references() {
    let docs = manifests();
    let by_kind = |kind: &str| -> BTreeMap<String, &Yaml> {
        docs.iter()
            .filter(|(_, d)| d["kind"].as_str() == Some(kind))
            .map(|(_, d)| (d["metadata"]["name"].as_str().unwrap().to_owned(), d))
            .collect()
    };
    let config_maps: BTreeMap<String, BTreeSet<String>> =
        by_kind("ConfigMap").into_iter().map(|(n, d)| (n, keys(&d["data"]))).collect();
    let secrets: BTreeMap<String, BTreeSet<String>> = by_kind("Secret")
        .into_iter()
        .map(|(n, d)| (n, keys(&d["stringData"]).union(&keys(&d["data"])).cloned().collect()))
        .collect();
    for (name, vars) in &secrets {
        for v in vars {
            assert!(STORE_VARS.contains(&v.as_str()), "Secret {name}: `{v}` is not a variable object_store reads");
        }
    }
    // Each ConfigMap's run URL names an object store and its config.toml is a valid run config.
    for (_, d) in docs.iter().filter(|(_, d)| d["kind"].as_str() == Some("ConfigMap")) {
        if let Some(url) = d["data"]["run-url"].as_str() {
            assert!(
                ["s3://", "gs://", "az://", "file://"].iter().any(|s| url.starts_with(s)),
                "run-url `{url}` is no object store URL"
            );
        }
        if let Some(text) = d["data"]["config.toml"].as_str() {
            RunConfig::parse(text, "the ConfigMap's config.toml").unwrap();
        }
    }

    let mut subcommands = Vec::new();
    for (origin, d) in &docs {
        let kind = d["kind"].as_str().unwrap();
        if !["Deployment", "StatefulSet", "Job"].contains(&kind) {
            continue;
        }
        let pod = &d["spec"]["template"]["spec"];
        let labels = &d["spec"]["template"]["metadata"]["labels"];
        for (k, v) in d["spec"]["selector"]["matchLabels"].as_hash().unwrap_or_else(|| panic!("{origin}: no selector"))
        {
            assert_eq!(
                &labels[str_of(k, "label", origin)],
                v,
                "{origin}: the selector does not match the pod's labels"
            );
        }
        let grace = pod["terminationGracePeriodSeconds"].as_i64().unwrap_or(30);
        assert!(
            grace >= 60,
            "{origin}: terminationGracePeriodSeconds {grace} leaves no time for the last shard or checkpoint"
        );
        let volumes: BTreeMap<String, &Yaml> = pod["volumes"]
            .as_vec()
            .map(|v| v.iter().map(|v| (str_of(&v["name"], "volume name", origin).to_owned(), v)).collect())
            .unwrap_or_default();
        for (vname, v) in &volumes {
            if let Some(cm) = v["configMap"]["name"].as_str() {
                let have = config_maps.get(cm).unwrap_or_else(|| panic!("{origin}: volume {vname}: no ConfigMap {cm}"));
                for item in v["configMap"]["items"].as_vec().into_iter().flatten() {
                    let key = str_of(&item["key"], "item key", origin);
                    assert!(have.contains(key), "{origin}: volume {vname}: ConfigMap {cm} has no key {key}");
                }
            }
        }
        let containers = pod["containers"].as_vec().unwrap_or_else(|| panic!("{origin}: no containers"));
        for c in containers {
            let origin = format!("{origin}, container {}", str_of(&c["name"], "container name", origin));
            let mut env = BTreeMap::new();
            for e in c["env"].as_vec().into_iter().flatten() {
                let name = str_of(&e["name"], "env name", &origin);
                let from = &e["valueFrom"];
                for (key_ref, objects) in [("configMapKeyRef", &config_maps), ("secretKeyRef", &secrets)] {
                    let r = &from[key_ref];
                    if r.is_badvalue() {
                        continue;
                    }
                    let (obj, key) = (str_of(&r["name"], "name", &origin), str_of(&r["key"], "key", &origin));
                    let have = objects.get(obj).unwrap_or_else(|| panic!("{origin}: env {name}: no object {obj}"));
                    assert!(have.contains(key), "{origin}: env {name}: {obj} has no key {key}");
                }
                env.insert(name.to_owned(), e["value"].as_str().map(str::to_owned));
            }
            let mut store_vars = BTreeSet::new();
            for e in c["envFrom"].as_vec().into_iter().flatten() {
                if let Some(s) = e["secretRef"]["name"].as_str() {
                    store_vars
                        .extend(secrets.get(s).unwrap_or_else(|| panic!("{origin}: no Secret {s}")).iter().cloned());
                }
                if let Some(m) = e["configMapRef"]["name"].as_str() {
                    assert!(config_maps.contains_key(m), "{origin}: no ConfigMap {m}");
                }
            }
            for v in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"] {
                assert!(store_vars.contains(v), "{origin}: the store credentials lack {v}");
            }
            let mounts: BTreeMap<String, String> = c["volumeMounts"]
                .as_vec()
                .into_iter()
                .flatten()
                .map(|m| {
                    let v = str_of(&m["name"], "mount name", &origin);
                    assert!(volumes.contains_key(v), "{origin}: mount of an undefined volume {v}");
                    (str_of(&m["mountPath"], "mountPath", &origin).to_owned(), v.to_owned())
                })
                .collect();
            let cache = env.get("RENJU_ZERO_CACHE").cloned().flatten();
            let cache = cache.unwrap_or_else(|| panic!("{origin}: RENJU_ZERO_CACHE is not set"));
            assert!(mounts.contains_key(&cache), "{origin}: the cache {cache} is not a mounted volume");

            let args: Vec<String> = c["args"]
                .as_vec()
                .unwrap_or_else(|| panic!("{origin}: no args"))
                .iter()
                .map(|a| str_of(a, "arg", &origin).to_owned())
                .collect();
            for a in &args {
                if let Some(var) = a.strip_prefix("$(").and_then(|a| a.strip_suffix(')')) {
                    assert!(env.contains_key(var), "{origin}: argument {a} names no env variable of the container");
                }
            }
            let sub = check_command_line(&args, &["trainer", "selfplay"], &origin);
            let run = args.iter().position(|a| a == "--run").and_then(|i| args.get(i + 1));
            assert!(run.is_some(), "{origin}: no --run");
            if let Some(i) = args.iter().position(|a| a == "--config") {
                let path = Path::new(&args[i + 1]);
                let dir = path.parent().unwrap().to_string_lossy().into_owned();
                assert!(mounts.contains_key(&dir), "{origin}: --config {} is not in a mounted volume", path.display());
            }

            let res = &c["resources"];
            for r in ["cpu", "memory"] {
                assert!(!res["requests"][r].is_badvalue(), "{origin}: no {r} request");
            }
            if sub == "trainer" {
                assert_eq!(res["limits"]["nvidia.com/gpu"].as_i64(), Some(1), "{origin}: the trainer needs one GPU");
                let replicas = d["spec"]["replicas"].as_i64().unwrap_or(1);
                assert_eq!(replicas, 1, "{origin}: more than one trainer replica");
                if kind == "Deployment" {
                    assert_eq!(
                        d["spec"]["strategy"]["type"].as_str(),
                        Some("Recreate"),
                        "{origin}: a rolling update would start a second trainer beside the first"
                    );
                }
            }
            subcommands.push(sub);
        }
    }
    subcommands.sort();
    assert_eq!(subcommands, ["selfplay", "trainer"], "the manifests must run one trainer and the self-play workers");
}

#[test]
fn slurm_scripts_are_valid_bash_running_real_commands() {
    let shellcheck = Command::new("shellcheck").arg("--version").output().is_ok_and(|o| o.status.success());
    let mut subcommands = BTreeSet::new();
    for path in files("deploy/slurm", "sh") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let out = Command::new("bash").arg("-n").arg(&path).output().unwrap();
        assert!(out.status.success(), "bash -n {name}: {}", String::from_utf8_lossy(&out.stderr));
        if shellcheck {
            let out = Command::new("shellcheck").arg(&path).output().unwrap();
            assert!(out.status.success(), "shellcheck {name}:\n{}", String::from_utf8_lossy(&out.stdout));
        }
        // Every command line of the form `"$RENJU_ZERO" sub --flag ...` (the scripts' one spelling).
        for (n, line) in std::fs::read_to_string(&path).unwrap().lines().enumerate() {
            let Some((_, rest)) = line.split_once("\"$RENJU_ZERO\" ") else { continue };
            let args: Vec<String> = rest
                .split_whitespace()
                .take_while(|w| !w.starts_with(['&', '|', ';', '>']))
                .map(str::to_owned)
                .collect();
            let origin = format!("{name}:{}", n + 1);
            subcommands.insert(check_command_line(&args, &["trainer", "selfplay", "check-run"], &origin));
        }
    }
    for sub in ["trainer", "selfplay"] {
        assert!(subcommands.contains(sub), "no Slurm script runs `renju-zero {sub}`");
    }
}
