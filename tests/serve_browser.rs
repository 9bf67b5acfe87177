//! `renju-zero serve` in a real browser: headless Chromium driven through WebDriver
//! (chromedriver, with the `fantoccini` client) plays whole RIF games against the shipped model
//! through the page, once as the first player and once as the second, so that the swap decision
//! and the fifth-move offers are made by both the person and the AI; it checks Black's
//! forbidden-point marks on a known double-three position and keeps screenshots under
//! `target/serve-e2e/`.
//!
//! Chromium and chromedriver are Debian's `chromium` and `chromium-driver` at `/usr/bin`;
//! `scripts/test.sh` installs them when they are missing.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A child process killed when dropped.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `renju-zero serve` on a free port with the shipped model, showing run directory
/// `run`; returns it and its URL.
fn start_server(run: &Path) -> (Kill, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_renju-zero"))
        .args(["serve", "--port", "0", "--threads", "1", "--run"])
        .arg(run)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting renju-zero serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    let url = loop {
        let line = lines.next().expect("serve ended before saying its address").unwrap();
        seen += &line;
        seen.push('\n');
        if let Some(rest) = line.strip_prefix("renju-zero serve: ") {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    assert!(seen.contains("(model: the shipped model ("), "no model given, so the shipped one plays: {seen}");
    assert_eq!(seen.matches("the shipped model (").count(), 1, "the model is named once: {seen}");
    // Keep reading stderr so that the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (Kill(child), url)
}

/// Starts chromedriver on a free port and waits until it accepts connections.
fn start_chromedriver() -> (Kill, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting chromedriver");
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(30), "chromedriver did not start listening");
        std::thread::sleep(Duration::from_millis(100));
    }
    (Kill(child), format!("http://127.0.0.1:{port}"))
}

async fn connect(driver: &str, profile: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": CHROMIUM,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1300,950",
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector).capabilities(caps).connect(driver).await.expect("a WebDriver session")
}

/// Runs a script in the page and returns its value.
async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap_or_else(|e| panic!("script {script}: {e}"))
}

/// Waits until `script` returns true (up to `secs`), or panics with `what`.
async fn wait_for(c: &Client, script: &str, secs: u64, what: &str) {
    let start = Instant::now();
    loop {
        if js(c, script).await == Value::Bool(true) {
            return;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let state = js(
                c,
                "return [App.tab, document.querySelector('#status').textContent, \
                 document.querySelector('#an-status').textContent, document.querySelector('#moves').textContent]",
            )
            .await;
            panic!("timed out waiting for {what} (tab, play status, analyse status, moves: {state})");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}")).click().await.unwrap();
}

/// Sets a form control's value and fires its change event, as a person choosing it would.
async fn set_value(c: &Client, css: &str, value: &str) {
    let script = format!(
        "const e = document.querySelector({css:?}); e.value = {value:?}; \
         e.dispatchEvent(new Event('change', {{bubbles: true}})); return e.value"
    );
    assert_eq!(js(c, &script).await, Value::String(value.into()), "{css} takes {value}");
}

fn shots_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/serve-e2e");
    std::fs::create_dir_all(&d).unwrap();
    d
}

async fn screenshot(c: &Client, name: &str) {
    let png = c.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    std::fs::write(shots_dir().join(name), png).unwrap();
}

fn point_name(x: usize, y: usize) -> String {
    format!("{}{}", (b'a' + x as u8) as char, y + 1)
}

/// What the test saw of one game.
#[derive(Default, Debug)]
struct Seen {
    human_actions: Vec<String>,
    human_offers: usize,
    human_picks: usize,
    decisions: Vec<String>,
}

/// Plays one game through the Play tab as `side` ("first" / "second"): the person's stones
/// go on the free point nearest the centre that is not forbidden (tried in turn until the page
/// accepts one: the opening zones and the offers' symmetry rule refuse some), swap decisions
/// alternate between keep and swap by game, an offer to pick is the first one shown.
async fn play_game(c: &Client, side: &str, prefer: &str) -> Seen {
    click(c, "#tab-play").await;
    set_value(c, "#rule", "renju").await;
    set_value(c, "#protocol", "rif").await;
    set_value(c, "#side", side).await;
    set_value(c, "#seconds", "0.1").await;
    click(c, "#new-game").await;
    let mut seen = Seen::default();
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < Duration::from_secs(300), "the game did not end in 5 minutes: {seen:?}");
        wait_for(
            c,
            "return document.body.dataset.busy === '0' && ['human', 'over'].includes(document.body.dataset.phase) \
             && Play.pos !== null",
            120,
            "the person's turn or the end",
        )
        .await;
        let pos = js(c, "return Play.pos").await;
        if js(c, "return document.body.dataset.phase").await == "over" {
            assert!(!pos["outcome"].is_null(), "{pos}");
            seen.decisions = pos["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
            let status = js(c, "return document.querySelector('#status').textContent").await;
            let text = pos["outcome"]["text"].as_str().unwrap();
            assert!(status.as_str().unwrap().contains(text), "the result is announced: {status} / {text}");
            return seen;
        }
        let before = pos["moves"].as_array().unwrap().len();
        let decision = pos["decision"].as_str().unwrap().to_string();
        let actions: Vec<String> =
            pos["actions"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect();
        if !pos["placeable"].as_bool().unwrap() {
            let a = if actions.iter().any(|a| a == prefer) { prefer.to_string() } else { actions[0].clone() };
            click(c, &format!("#actions button.action[data-action='{a}']")).await;
            seen.human_actions.push(a);
        } else if decision == "pick-offer" {
            let offer = pos["offers"][0].as_str().unwrap().to_string();
            assert!(
                js(c, &format!("return document.querySelector('#board .offer[data-point={offer}]') !== null")).await
                    == Value::Bool(true),
                "the offers are marked on the board"
            );
            click(c, &format!("#board .pt[data-point='{offer}']")).await;
            seen.human_picks += 1;
        } else {
            let size = 15usize;
            let occupied: Vec<String> = pos["stones"]
                .as_array()
                .unwrap()
                .iter()
                .chain(pos["offers"].as_array().unwrap())
                .map(|s| s.get("point").unwrap_or(s).as_str().unwrap().to_string())
                .collect();
            let forbidden: Vec<String> =
                pos["forbidden"].as_array().unwrap().iter().map(|f| f["point"].as_str().unwrap().to_string()).collect();
            let mut points: Vec<(usize, usize)> = (0..size).flat_map(|x| (0..size).map(move |y| (x, y))).collect();
            let d = |&(x, y): &(usize, usize)| (x.abs_diff(7).pow(2) + y.abs_diff(7).pow(2), x, y);
            points.sort_by_key(d);
            let mut placed = false;
            for (x, y) in points {
                let p = point_name(x, y);
                if occupied.contains(&p) || forbidden.contains(&p) {
                    continue;
                }
                click(c, &format!("#board .pt[data-point='{p}']")).await;
                wait_for(
                    c,
                    "return document.body.dataset.busy === '0' || document.body.dataset.phase !== 'human'",
                    60,
                    "the click's answer",
                )
                .await;
                let after = js(c, "return Play.moves.length").await.as_u64().unwrap() as usize;
                if after > before {
                    placed = true;
                    if decision == "offer" {
                        seen.human_offers += 1;
                    }
                    break;
                }
            }
            assert!(placed, "no point was accepted for a {decision} decision: {pos}");
        }
        wait_for(
            c,
            &format!("return Play.moves.length > {before} || Play.pos.moves.length > {before}"),
            60,
            "the decision to be taken",
        )
        .await;
    }
}

#[test]
fn a_person_plays_whole_rif_games_against_the_shipped_model_in_chromium() {
    if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
        panic!(
            "{CHROMIUM} and {CHROMEDRIVER} are needed: `apt-get install chromium chromium-driver` (scripts/test.sh \
             installs them when missing)"
        );
    }
    // A run directory with two arena games for the Replay tab.
    let run = tempfile::tempdir().unwrap();
    let arena = Command::new(env!("CARGO_BIN_EXE_renju-zero"))
        .args(["arena", "--player", "a=heuristic,playouts=8", "--player", "b=uniform,playouts=8", "--games", "2"])
        .args(["--openings", "protocol", "--protocol", "rif", "--threads", "1", "--quiet", "--out"])
        .arg(run.path().join("arena"))
        .output()
        .unwrap();
    assert!(arena.status.success(), "{}", String::from_utf8_lossy(&arena.stderr));
    let (_server, url) = start_server(run.path());
    let (_driver, driver_url) = start_chromedriver();
    let profile = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let c = connect(&driver_url, profile.path()).await;
        c.goto(&url).await.unwrap();
        wait_for(&c, "return typeof Play === 'object' && Play.pos !== null", 30, "the page to load").await;
        let errors = js(&c, "return document.querySelector('#status').className").await;
        assert!(!errors.as_str().unwrap_or("").contains("error"), "the page starts without an error");

        // RULES.md §4.5: f8 g8 h6 h7 (White far away) make h8 a double-three for Black.
        click(&c, "#tab-analyse").await;
        assert_eq!(js(&c, "return document.querySelector('#an-protocol').value").await, "free", "the free opening");
        set_value(&c, "#an-moves", "f8 a1 g8 a3 h6 o1 h7 o3").await;
        click(&c, "#an-load").await;
        wait_for(&c, "return document.querySelectorAll('#board .stone').length === 8", 30, "the position to load")
            .await;
        let marks =
            js(&c, "return [...document.querySelectorAll('#board .forbidden')].map(e => e.dataset.point)").await;
        assert_eq!(marks, json!(["h8"]), "the one forbidden point, h8, is marked");
        screenshot(&c, "forbidden-double-three.png").await;
        // An analysis of that position lists its candidates, the first the move the engine
        // plays, each visited one with the bound it was chosen by (below its win rate).
        click(&c, "#an-start").await;
        wait_for(&c, "return document.querySelectorAll('#an-candidates tbody tr').length >= 3", 60, "candidates").await;
        click(&c, "#an-stop").await;
        wait_for(&c, "return !document.querySelector('#an-start').disabled", 30, "the analysis to stop").await;
        screenshot(&c, "analysis.png").await;
        let first =
            js(&c, "return [...document.querySelector('#an-candidates tbody tr').children].map(td => td.textContent)")
                .await;
        let cell = |i: usize| first[i].as_str().unwrap_or("").to_string();
        let (win, bound): (f64, f64) = (cell(3).parse().unwrap_or(-1.0), cell(4).parse().unwrap_or(-1.0));
        assert!(
            (0.0..=win).contains(&bound),
            "the first candidate's bound is a percentage under its win rate: {first}"
        );
        // The API answers a query with the query's own id (the server runs it under its own).
        let answer = c
            .execute_async(
                "const done = arguments[arguments.length - 1]; \
                 fetch('/api/analyze', {method: 'POST', headers: {'Content-Type': 'application/json'}, \
                   body: JSON.stringify({id: 'mine-1', rule: 'renju', moves: ['h8', 'h9'], visits: 16})}) \
                   .then(r => r.json()).then(done, e => done(String(e)))",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(answer["id"], "mine-1", "{answer}");
        assert!(answer["candidates"].as_array().is_some_and(|c| !c.is_empty()), "{answer}");

        // RIF: after the swap the player holding Black places two fifth-move offers and the
        // other picks one. As the first player the person keeps Black unless the AI swaps; the
        // second game, as the second player, makes the person's swap decision put them on the
        // other side of the offers than in the first game, so that both directions are played.
        let first = play_game(&c, "first", "keep").await;
        screenshot(&c, "rif-game-as-first.png").await;
        let prefer = if first.human_offers > 0 { "keep" } else { "swap" };
        let second = play_game(&c, "second", prefer).await;
        screenshot(&c, "rif-game-as-second.png").await;
        for g in [&first, &second] {
            assert!(g.decisions.len() > 8, "the game went past the fifth-move offers: {g:?}");
            assert!(g.decisions.iter().any(|d| d == "keep" || d == "swap"), "a swap decision was made: {g:?}");
            assert!(g.human_offers == 2 || g.human_picks == 1, "the person offered or picked: {g:?}");
        }
        assert!(!second.human_actions.is_empty(), "the person made the swap decision: {second:?}");
        assert!(
            first.human_offers + second.human_offers == 2 && first.human_picks + second.human_picks == 1,
            "the person offered in one game and picked in the other: {first:?} {second:?}"
        );

        // Replay: the run's two games, stepped through from the first decision.
        click(&c, "#tab-replay").await;
        wait_for(&c, "return document.querySelectorAll('#games li.game').length === 2", 30, "the run's games").await;
        click(&c, "#games li.game").await;
        click(&c, "#replay-first").await;
        wait_for(&c, "return document.querySelectorAll('#board .stone').length === 0", 10, "the empty board").await;
        for _ in 0..3 {
            click(&c, "#replay-next").await;
        }
        wait_for(&c, "return document.querySelectorAll('#board .stone').length === 3", 10, "three stones").await;
        screenshot(&c, "board.png").await;
        c.close().await.unwrap();
    });
}
