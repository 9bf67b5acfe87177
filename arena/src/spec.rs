//! Player specs (`NAME=SPEC` on the command line: `model:DIR,playouts=200`, `heuristic`,
//! `uniform`, `engine:"CMD"`) and building agents from them: the one place that depends on both
//! the search agent ([`crate::agent`]) and the engine client ([`crate::engine`]).
//!
//! The evaluator part of a search player's spec is the one evaluator grammar,
//! [`EvaluatorSpec`] (`renju_selfplay::eval`). This crate never loads a network itself: a
//! `model:` spec is turned into an evaluator by the caller's [`EvaluatorLoader`] (the CLI passes
//! `renju_trainer::model::evaluator_loader`).

use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use renju_selfplay::eval::{EvaluatorLoader, EvaluatorSpec};
use renju_selfplay::mcts::SearchConfig;
use renju_selfplay::stones_only::StonesOnlyEvaluator;

use crate::agent::{Agent, MctsAgent, SearchLimit, SearchSettings};
use crate::engine::{EngineAgent, EngineSpec};

/// What kind of player a spec describes.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerKind {
    /// PUCT search over an evaluator.
    Search { eval: EvaluatorSpec, settings: SearchSettings },
    /// An external program speaking the Gomocup protocol, with its budget per move.
    Engine(EngineSpec),
}

/// A named player: `NAME=SPEC` on the command line.
///
/// SPEC grammar: `KIND[,key=value]...` with KIND one of `model:DIR`, `shipped` (the model built
/// into the binary), `heuristic`, `uniform`,
/// `engine:"CMD ARGS"` (the command is split like a shell would, see the `shlex` crate; quotes
/// are needed when it contains commas). Keys for search players: `playouts=N`, `time=SECONDS`,
/// `batch=B`, `explore=K`, `cpuct=C`, `fpu=R` and `root_fpu=R` (first-play-urgency reductions below
/// and at the root, `SearchConfig::fpu_reduction`, `root_fpu_reduction`), `algorithm=puct|gumbel`,
/// `vcf_nodes=N` (the VCF check at node
/// expansion with N solver nodes per call, `SearchConfig::vcf_nodes`; default 0, off), `vct_nodes=N`
/// and `vct_visits=V` (the VCT check of a node with V visits, `SearchConfig::vct_nodes`; default 0,
/// off), `policy_temp=T` (the search's priors from the policy logits divided by T,
/// `SearchConfig::policy_temperature`; default 1), `lcb=Z` (play the root child with the best
/// lower confidence bound of its value at Z standard errors, `SearchSettings::lcb`; default: the
/// most visited),
/// `inputs=full|stones` (`stones`: the network sees ordinary placements as an engine that knows
/// only the stones gives them, [`StonesOnlyEvaluator`]; default `full`); for
/// engines: `nodes=N` (nodes per move, `INFO max_node`), `depth=D` (search depth per move,
/// `INFO max_depth`) and `time=SECONDS` (`INFO timeout_turn`; default
/// [`EngineSpec::default_time`]: 5, or 60 with `nodes` or `depth`), `match=SECONDS` (a match
/// clock for each game: `INFO timeout_match`, `INFO time_left`; the engine loses a game whose
/// clock runs out), `threads=T` (`INFO thread_num`). With neither `playouts` nor
/// `time` a search player uses 200 playouts.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerSpec {
    pub name: String,
    pub kind: PlayerKind,
    /// The spec text as given (for reports).
    pub text: String,
}

impl PlayerSpec {
    /// Parses `NAME=SPEC`. Errors name the offending part.
    pub fn parse_named(s: &str) -> Result<PlayerSpec> {
        let Some((name, spec)) = s.split_once('=') else {
            bail!("player '{s}': expected NAME=SPEC, e.g. 'gen3=model:runs/quick/models/gen-000003,playouts=200'");
        };
        let name = name.trim();
        ensure!(!name.is_empty(), "player '{s}': the name before '=' is empty");
        ensure!(
            name.chars().all(|c| c.is_alphanumeric() || "-_.".contains(c)),
            "player '{s}': name '{name}' may only hold letters, digits, '-', '_' and '.'"
        );
        PlayerSpec::parse(name, spec)
    }

    /// Parses SPEC (see the type docs) for a player called `name`.
    pub fn parse(name: &str, spec: &str) -> Result<PlayerSpec> {
        let t = spec.trim();
        let (kind_text, rest) = if let Some(cmd) = t.strip_prefix("engine:") {
            if let Some(q) = cmd.strip_prefix('"') {
                let end = q
                    .find('"')
                    .with_context(|| format!("player {name}: engine command '{cmd}' has no closing quote"))?;
                (format!("engine:{}", &q[..end]), q[end + 1..].to_string())
            } else {
                let end = cmd.find(',').unwrap_or(cmd.len());
                (format!("engine:{}", &cmd[..end]), cmd[end..].to_string())
            }
        } else {
            let end = t.find(',').unwrap_or(t.len());
            (t[..end].to_string(), t[end..].to_string())
        };
        let mut opts = Vec::new();
        for part in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) =
                part.split_once('=').with_context(|| format!("player {name}: option '{part}' is not key=value"))?;
            opts.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        let num = |k: &str, v: &str| -> Result<f64> {
            let x: f64 = v.parse().map_err(|_| anyhow::anyhow!("player {name}: {k}='{v}' is not a number"))?;
            ensure!(x.is_finite() && x >= 0.0, "player {name}: {k}={v} must be a non-negative number");
            Ok(x)
        };
        // A count of at least 1 (playouts, batch, nodes, depth).
        let whole = |k: &str, v: &str| -> Result<u64> {
            let n: u64 = v.parse().map_err(|_| anyhow::anyhow!("player {name}: {k}='{v}' is not a whole number"))?;
            ensure!(n >= 1, "player {name}: {k}={v} must be at least 1");
            Ok(n)
        };
        let kind = if let Some(cmd) = kind_text.strip_prefix("engine:") {
            let command =
                shlex::split(cmd).with_context(|| format!("player {name}: cannot split engine command '{cmd}'"))?;
            ensure!(!command.is_empty(), "player {name}: the engine command is empty");
            let (mut time, mut nodes, mut depth, mut match_time, mut threads) = (None, None, None, None, None);
            for (k, v) in &opts {
                match k.as_str() {
                    "time" => {
                        let t = num(k, v)?;
                        ensure!(t > 0.0, "player {name}: time={v} must be a positive number of seconds");
                        time = Some(Duration::from_secs_f64(t));
                    }
                    "match" => {
                        let t = num(k, v)?;
                        ensure!(t > 0.0, "player {name}: match={v} must be a positive number of seconds");
                        match_time = Some(Duration::from_secs_f64(t));
                    }
                    "nodes" => nodes = Some(whole(k, v)?),
                    "depth" => depth = Some(whole(k, v)?),
                    "threads" => threads = Some(whole(k, v)?),
                    other => bail!(
                        "player {name}: unknown engine option '{other}' (engines take nodes=N, depth=D, time=SECONDS, match=SECONDS, threads=T)"
                    ),
                }
            }
            let time = time.unwrap_or_else(|| EngineSpec::default_time(nodes, depth));
            PlayerKind::Engine(EngineSpec { command, time, nodes, depth, match_time, threads })
        } else {
            let eval = match kind_text.as_str() {
                k if k == "uniform" || k == "heuristic" || k == "shipped" || k.starts_with("model:") => {
                    EvaluatorSpec::parse(k).with_context(|| format!("player {name}"))?
                }
                other => bail!(
                    "player {name}: unknown player kind '{other}' (expected model:DIR, shipped, heuristic, uniform or engine:\"CMD\")"
                ),
            };
            let mut s = SearchSettings::default();
            let (mut playouts, mut time) = (None, None);
            for (k, v) in &opts {
                match k.as_str() {
                    "playouts" => playouts = Some(whole(k, v)?),
                    "time" => time = Some(Duration::from_secs_f64(num(k, v)?)),
                    "batch" => s.batch = whole(k, v)? as usize,
                    "threads" => s.threads = whole(k, v)? as usize,
                    "inputs" => {
                        s.stones_only = match v.as_str() {
                            "stones" => true,
                            "full" => false,
                            _ => bail!("player {name}: inputs={v} must be 'full' or 'stones'"),
                        }
                    }
                    "explore" => s.explore = num(k, v)? as usize,
                    "cpuct" => s.config.c_puct = num(k, v)? as f32,
                    "fpu" => s.config.fpu_reduction = num(k, v)? as f32,
                    "root_fpu" => s.config.root_fpu_reduction = num(k, v)? as f32,
                    "algorithm" => s.config.algorithm = v.parse().with_context(|| format!("player {name}"))?,
                    "vcf_nodes" => {
                        let n = num(k, v)?;
                        ensure!(n.fract() == 0.0, "player {name}: vcf_nodes={v} must be a whole number of nodes");
                        s.config.vcf_nodes = n as u64;
                    }
                    "vct_nodes" => {
                        let n = num(k, v)?;
                        ensure!(n.fract() == 0.0, "player {name}: vct_nodes={v} must be a whole number of nodes");
                        s.config.vct_nodes = n as u64;
                    }
                    "vct_visits" => s.config.vct_visits = whole(k, v)? as u32,
                    "policy_temp" => {
                        let t = num(k, v)?;
                        ensure!(
                            SearchConfig::is_policy_temperature(t),
                            "player {name}: policy_temp={v} must be a positive number"
                        );
                        s.config.policy_temperature = t as f32;
                    }
                    "lcb" => s.lcb = Some(num(k, v)? as f32),
                    other => bail!(
                        "player {name}: unknown option '{other}' (search players take playouts, time, batch, threads, explore, \
                         cpuct, fpu, root_fpu, algorithm, vcf_nodes, vct_nodes, vct_visits, policy_temp, lcb, inputs)"
                    ),
                }
            }
            if playouts.is_some() || time.is_some() {
                s.limit = SearchLimit { playouts, time };
            }
            PlayerKind::Search { eval, settings: s }
        };
        Ok(PlayerSpec { name: name.to_string(), kind, text: spec.trim().to_string() })
    }

    /// Builds a fresh agent for games on `size` x `size` boards under `rule`.
    pub fn build(&self, size: usize, rule: renju_rules::Rule, loader: &EvaluatorLoader) -> Result<Box<dyn Agent>> {
        Ok(match &self.kind {
            PlayerKind::Search { eval, settings } => {
                // One evaluator per search thread.
                let build = || -> Result<Box<dyn renju_selfplay::eval::Evaluator>> {
                    let e = eval.build(size, loader)?;
                    Ok(if settings.stones_only { Box::new(StonesOnlyEvaluator::new(e)) } else { e })
                };
                let evals = (0..settings.threads.max(1)).map(|_| build()).collect::<Result<_>>()?;
                Box::new(MctsAgent::with_evaluators(evals, settings.clone()))
            }
            PlayerKind::Engine(spec) => Box::new(
                EngineAgent::spawn(spec, size, rule)
                    .with_context(|| format!("starting engine of player {}", self.name))?,
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn parses_player_specs() {
        let p = PlayerSpec::parse_named("g3=model:runs/quick/models/gen-000003,playouts=200").unwrap();
        assert_eq!(p.name, "g3");
        match PlayerSpec::parse_named("h=heuristic,algorithm=gumbel").unwrap().kind {
            PlayerKind::Search { settings, .. } => {
                assert_eq!(settings.config.algorithm, renju_selfplay::mcts::SearchAlgorithm::Gumbel)
            }
            k => panic!("{k:?}"),
        }
        let e = format!("{:#}", PlayerSpec::parse_named("h=heuristic,algorithm=mcts").unwrap_err());
        assert!(e.contains("unknown search algorithm 'mcts'"), "{e}");
        match &p.kind {
            PlayerKind::Search { eval, settings } => {
                assert_eq!(eval, &EvaluatorSpec::Model(PathBuf::from("runs/quick/models/gen-000003")));
                assert_eq!(settings.limit, SearchLimit { playouts: Some(200), time: None });
            }
            k => panic!("{k:?}"),
        }
        match PlayerSpec::parse_named("h=heuristic,fpu=0.35,root_fpu=0.1").unwrap().kind {
            PlayerKind::Search { settings, .. } => {
                assert_eq!((settings.config.fpu_reduction, settings.config.root_fpu_reduction), (0.35, 0.1))
            }
            k => panic!("{k:?}"),
        }
        let e = format!("{:#}", PlayerSpec::parse_named("h=heuristic,fpu=-1").unwrap_err());
        assert!(e.contains("fpu=-1 must be a non-negative number"), "{e}");
        match PlayerSpec::parse_named("h=heuristic,policy_temp=1.4").unwrap().kind {
            PlayerKind::Search { settings, .. } => assert_eq!(settings.config.policy_temperature, 1.4),
            other => panic!("not a search player: {other:?}"),
        }
        let e = format!("{:#}", PlayerSpec::parse_named("h=heuristic,policy_temp=0").unwrap_err());
        assert!(e.contains("policy_temp=0 must be a positive number"), "{e}");
        match PlayerSpec::parse_named("h=heuristic,lcb=1.5").unwrap().kind {
            PlayerKind::Search { settings, .. } => assert_eq!(settings.lcb, Some(1.5)),
            other => panic!("not a search player: {other:?}"),
        }
        let e = format!("{:#}", PlayerSpec::parse_named("h=heuristic,lcb=-1").unwrap_err());
        assert!(e.contains("lcb=-1 must be a non-negative number"), "{e}");
        let p = PlayerSpec::parse_named("h=heuristic,time=0.5,explore=4,vcf_nodes=300").unwrap();
        match &p.kind {
            PlayerKind::Search { eval, settings } => {
                assert_eq!(eval, &EvaluatorSpec::Heuristic);
                assert_eq!(settings.limit, SearchLimit { playouts: None, time: Some(Duration::from_millis(500)) });
                assert_eq!(settings.explore, 4);
                assert_eq!(settings.config.vcf_nodes, 300);
                assert!(!settings.stones_only, "full inputs unless told");
            }
            k => panic!("{k:?}"),
        }
        match PlayerSpec::parse_named("h=heuristic,inputs=stones").unwrap().kind {
            PlayerKind::Search { settings, .. } => assert!(settings.stones_only),
            k => panic!("{k:?}"),
        }
        let p = PlayerSpec::parse_named(r#"e=engine:"./pbrain-x --flag a,b",time=2"#).unwrap();
        assert_eq!(
            p.kind,
            PlayerKind::Engine(EngineSpec {
                command: vec!["./pbrain-x".into(), "--flag".into(), "a,b".into()],
                time: Duration::from_secs(2),
                nodes: None,
                depth: None,
                match_time: None,
                threads: None,
            })
        );
        let p = PlayerSpec::parse_named(r#"r=engine:"engines/rapfi/pbrain-rapfi",nodes=16000,depth=12"#).unwrap();
        assert_eq!(
            p.kind,
            PlayerKind::Engine(EngineSpec {
                command: vec!["engines/rapfi/pbrain-rapfi".into()],
                time: Duration::from_secs(60),
                nodes: Some(16000),
                depth: Some(12),
                match_time: None,
                threads: None,
            }),
            "a node or depth budget makes the time a 60 s guard"
        );
        match PlayerSpec::parse_named("r=engine:pbrain-x,time=0.5,match=10").unwrap().kind {
            PlayerKind::Engine(e) => {
                assert_eq!((e.time, e.match_time), (Duration::from_millis(500), Some(Duration::from_secs(10))))
            }
            k => panic!("{k:?}"),
        }
        match PlayerSpec::parse_named("r=engine:pbrain-x,time=0.2,threads=2").unwrap().kind {
            PlayerKind::Engine(e) => assert_eq!((e.time, e.threads), (Duration::from_millis(200), Some(2))),
            k => panic!("{k:?}"),
        }
        match PlayerSpec::parse_named("r=engine:pbrain-x,time=0.5,nodes=1000").unwrap().kind {
            PlayerKind::Engine(e) => assert_eq!((e.time, e.nodes), (Duration::from_millis(500), Some(1000))),
            k => panic!("{k:?}"),
        }
        match PlayerSpec::parse_named("r=engine:pbrain-x").unwrap().kind {
            PlayerKind::Engine(e) => assert_eq!(e.time, Duration::from_secs(5)),
            k => panic!("{k:?}"),
        }
        let p = PlayerSpec::parse_named("u=uniform").unwrap();
        assert!(matches!(p.kind, PlayerKind::Search { eval: EvaluatorSpec::Uniform, .. }));
    }

    #[test]
    fn bad_specs_name_the_problem() {
        let e = |s: &str| PlayerSpec::parse_named(s).unwrap_err().to_string();
        assert!(e("heuristic").contains("NAME=SPEC"));
        assert!(e("a=magic").contains("unknown player kind 'magic'"));
        assert!(e("a=heuristic,playouts=x").contains("playouts='x'"));
        assert!(e("a=heuristic,playouts=0").contains("playouts=0 must be at least 1"));
        assert!(e("a=heuristic,batch=2.5").contains("batch='2.5' is not a whole number"));
        assert!(e("a=heuristic,vcf_nodes=1.5").contains("vcf_nodes=1.5 must be a whole number"));
        assert!(e("a=heuristic,inputs=planes").contains("inputs=planes must be 'full' or 'stones'"));
        // The in-search VCF budget has one name: `vcf=` is refused, naming the accepted keys.
        assert!(
            e("a=heuristic,vcf=300").contains("unknown option 'vcf'") && e("a=heuristic,vcf=300").contains("vcf_nodes")
        );
        assert!(e("a=heuristic,depth=3").contains("unknown option 'depth'"));
        assert!(e("a=heuristic,playouts").contains("not key=value"));
        assert!(e(r#"a=engine:"x"#).contains("no closing quote"));
        assert!(e("a=engine:x,playouts=3").contains("unknown engine option 'playouts'"));
        assert!(
            e("a=engine:x,nodes=abc").contains("nodes='abc' is not a whole number"),
            "{}",
            e("a=engine:x,nodes=abc")
        );
        assert!(e("a=engine:x,nodes=1.5").contains("nodes='1.5' is not a whole number"));
        assert!(e("a=engine:x,nodes=0").contains("nodes=0 must be at least 1"));
        assert!(e("a=engine:x,depth=-2").contains("depth='-2' is not a whole number"));
        assert!(e("a=engine:x,depth=0").contains("depth=0 must be at least 1"));
        assert!(e("a=engine:x,time=0").contains("time=0 must be a positive number"));
        assert!(e("a=engine:x,time=soon").contains("time='soon' is not a number"));
    }
}
