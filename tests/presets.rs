//! The shipped presets (`configs/*.toml`): each parses, lists only keys it changes from
//! `configs/defaults.toml`, and its comments say what it is: the `# Summary:` line is the loaded
//! config's [`RunConfig::summary`], every `B x C` net shape it mentions is its own, a
//! `resnet-BxC` file name names its tower, and every `configs/NAME.toml` it mentions exists.

use renju_rules::Rule;
use renju_trainer::NetConfig;
use renju_zero::pipeline::RunConfig;
use std::path::{Path, PathBuf};

fn configs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("configs")
}

/// Every preset: (file stem, text, loaded config). `defaults.toml` is the reference, not a preset.
fn presets() -> Vec<(String, String, RunConfig)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(configs()).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.extension().is_some_and(|e| e == "toml") && stem != "defaults" {
            let text = std::fs::read_to_string(&path).unwrap();
            let cfg = RunConfig::load(&path).unwrap_or_else(|e| panic!("{stem}: {e:#}"));
            out.push((stem, text, cfg));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn preset(name: &str) -> RunConfig {
    RunConfig::load(&configs().join(format!("{name}.toml"))).unwrap()
}

/// The `B x C` shapes (digits, " x ", digits) written in `text`.
fn shapes(text: &str) -> Vec<(usize, usize)> {
    let number_before = |s: &str| -> Option<usize> {
        let digits: String = s.chars().rev().take_while(char::is_ascii_digit).collect();
        digits.chars().rev().collect::<String>().parse().ok()
    };
    let number_after =
        |s: &str| -> Option<usize> { s.chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok() };
    text.match_indices(" x ")
        .filter_map(|(i, _)| Some((number_before(&text[..i])?, number_after(&text[i + 3..])?)))
        .collect()
}

#[test]
fn the_presets_are_the_documented_ten() {
    let names: Vec<String> = presets().into_iter().map(|(n, _, _)| n).collect();
    assert_eq!(
        names,
        [
            "black-sets",
            "lianhuan",
            "quick",
            "resnet-10x128-gpu",
            "resnet-2x32",
            "soosorv8",
            "swap1",
            "swap2",
            "taraguchi10",
            "yamaguchi"
        ]
    );
}

#[test]
fn every_preset_says_what_it_is() {
    for (name, text, cfg) in presets() {
        let summary = format!("# Summary: {}\n", cfg.summary());
        assert!(text.contains(&summary), "{name}.toml lacks the line {summary:?}");
        assert!(
            text.contains(&format!("renju-zero train --config configs/{name}.toml")),
            "{name}.toml: its command line names another file"
        );
        let net = (cfg.training.net.blocks, cfg.training.net.channels);
        for shape in shapes(&text) {
            assert_eq!(
                shape, net,
                "{name}.toml mentions a {} x {} net but trains a {} x {} one",
                shape.0, shape.1, net.0, net.1
            );
        }
        if let Some(shape) = name.strip_prefix("resnet-") {
            let tower = format!("{}x{}", net.0, net.1);
            assert!(shape.starts_with(&tower), "{name}.toml trains a {tower} tower");
            assert_eq!(cfg.training.net.kind, renju_trainer::NetKind::Resnet, "{name}");
        }
        for (i, _) in text.match_indices("configs/") {
            let mentioned: String =
                text[i..].chars().take_while(|c| c.is_ascii_alphanumeric() || "/-_.".contains(*c)).collect();
            let mentioned = mentioned.trim_end_matches('.');
            if mentioned.ends_with(".toml") {
                assert!(
                    Path::new(env!("CARGO_MANIFEST_DIR")).join(mentioned).exists(),
                    "{name}.toml mentions {mentioned}"
                );
            }
        }
    }
}

#[test]
fn every_preset_lists_only_keys_it_changes() {
    let defaults = RunConfig::default();
    for (name, text, cfg) in presets() {
        let changed = defaults.differing_keys(&cfg);
        let table: toml::Table = toml::from_str(&text).unwrap();
        let mut listed = Vec::new();
        collect_keys("", &toml::Value::Table(table), &mut listed);
        for key in listed {
            assert!(changed.contains(&key), "{name}.toml sets {key} to its default value");
        }
    }
}

fn collect_keys(prefix: &str, v: &toml::Value, out: &mut Vec<String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                collect_keys(&key, v, out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

#[test]
fn the_protocol_presets_play_their_protocol() {
    let expected = [
        ("quick", "rif"),
        ("resnet-2x32", "rif"),
        ("resnet-10x128-gpu", "rif"),
        ("swap1", "swap1"),
        ("lianhuan", "lianhuan"),
        ("yamaguchi", "fifth-n"),
        ("black-sets", "black-sets"),
        ("soosorv8", "soosorv:8"),
        ("taraguchi10", "taraguchi:10"),
        ("swap2", "swap2"),
    ];
    for (name, protocol) in expected {
        let c = preset(name);
        assert_eq!(c.game.protocol.to_string(), protocol, "{name}");
        assert_eq!((c.game.size, c.game.rule), (15, Rule::Renju), "{name}");
    }
}

#[test]
fn the_default_run_is_the_line_pattern_net_on_two_cores() {
    let quick = preset("quick");
    assert_eq!(quick.training.net, NetConfig::preset("linepattern").unwrap());
    // Two cores: one libtorch thread for training, one for inference.
    assert_eq!((quick.training.intra_op_threads, quick.server.intra_op_threads), (1, 1));
    // It publishes every few seconds, 17 MB each: older generations are thinned out.
    assert_eq!(quick.pipeline.keep_generations_every, 20);
    assert_eq!(RunConfig::default().pipeline.keep_generations_every, 1);
    let err = RunConfig::parse("[pipeline]\nkeep_generations_every = 0\n", "zero").unwrap_err();
    assert!(format!("{err:#}").contains("pipeline.keep_generations_every must be at least 1"), "{err:#}");
}

#[test]
fn the_search_policy_temperature_must_be_positive() {
    assert_eq!(preset("quick").selfplay.search.policy_temperature, 1.0, "self-play's priors are the policy head's");
    let ok = RunConfig::parse("[selfplay.search]\npolicy_temperature = 1.5\n", "warm").unwrap();
    assert_eq!(ok.selfplay.search.policy_temperature, 1.5);
    for bad in ["0.0", "-1.0", "inf"] {
        let err = RunConfig::parse(&format!("[selfplay.search]\npolicy_temperature = {bad}\n"), "bad").unwrap_err();
        assert!(format!("{err:#}").contains("search.policy_temperature"), "{bad}: {err:#}");
    }
}

#[test]
fn the_resnet_presets_have_their_towers() {
    let quick = preset("quick");
    let gpu = preset("resnet-10x128-gpu");
    assert_eq!(gpu.training.net, NetConfig::preset("standard").unwrap());
    let resnet = preset("resnet-2x32");
    assert_eq!((resnet.training.net.blocks, resnet.training.net.channels), (2, 32));
    assert_eq!((resnet.training.intra_op_threads, resnet.server.intra_op_threads), (1, 1));
    assert_eq!(resnet.training.encoder_version, 3, "resnet-2x32 trains on encoder version 3");
    let s = &resnet.training.schedule;
    assert!(s.at(5000) < 0.2 * s.at(500), "resnet-2x32's learning rate decays: {s:?}");
    assert_eq!(
        (resnet.game.stone_cap, resnet.training.device),
        (quick.game.stone_cap, quick.training.device),
        "same game and device as quick"
    );
    // The protocol presets of the source documents: resnet-2x32's run with the default 6 x 64
    // tower on encoder 2.
    for name in ["swap1", "lianhuan", "yamaguchi", "black-sets"] {
        let c = preset(name);
        assert_eq!(c.training.net, NetConfig::default(), "{name}");
        assert_eq!(c.training.encoder_version, 2, "{name}");
        let d = resnet.differing_keys(&c);
        assert_eq!(
            d,
            ["game.protocol", "training.encoder_version", "training.net.blocks", "training.net.channels"],
            "{name}"
        );
    }
}

#[test]
fn the_official_rule_presets_are_the_default_run_under_their_rule() {
    // Soosõrv-8, Taraguchi-10 and Swap2: the default line-pattern run, only the protocol changed,
    // so that an opening study under each compares with the RIF study.
    let quick = preset("quick");
    for name in ["soosorv8", "taraguchi10", "swap2"] {
        assert_eq!(quick.differing_keys(&preset(name)), ["game.protocol"], "{name}");
    }
}
