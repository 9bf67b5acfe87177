//! The Gomocup brain as engine managers use it: positions accepted as they stand,
//! the first stone on the centre, no hang when Black's only defence is forbidden, and answers
//! within `timeout_turn` with a network whose every batch costs real time.

use renju_arena::agent::{Agent, MctsAgent, SearchSettings};
use renju_arena::gomocup::{Brain, BrainOptions};
use renju_selfplay::eval::{no_models, EvalOutput, Evaluator, EvaluatorSpec};
use std::time::{Duration, Instant};

/// The heuristic evaluator made to cost `delay` per batch, like a network on a CPU.
struct Slow {
    inner: Box<dyn Evaluator>,
    delay: Duration,
}

impl Evaluator for Slow {
    fn evaluate(&mut self, planes: &[f32], globals: &[f32], n: usize) -> anyhow::Result<EvalOutput> {
        std::thread::sleep(self.delay);
        self.inner.evaluate(planes, globals, n)
    }
    fn board_size(&self) -> usize {
        self.inner.board_size()
    }
}

fn brain(delay: Duration) -> Brain {
    let factory = Box::new(move |size: usize| -> anyhow::Result<Box<dyn Agent>> {
        let inner = EvaluatorSpec::parse("heuristic")?.build(size, &no_models)?;
        Ok(Box::new(MctsAgent::new(Box::new(Slow { inner, delay }), SearchSettings::default())))
    });
    Brain::new(factory, BrainOptions::default())
}

/// Answers to `script`, without MESSAGE lines.
fn run(b: &mut Brain, script: &str) -> Vec<String> {
    let mut lines = script.lines().map(String::from).collect::<Vec<_>>().into_iter();
    let mut out = Vec::new();
    while let Some(l) = lines.next() {
        out.extend(b.handle(&l, &mut lines).into_iter().filter(|a| !a.starts_with("MESSAGE")));
    }
    out
}

#[test]
fn begin_under_renju_with_no_match_limit_opens_at_the_centre() {
    let mut b = brain(Duration::ZERO);
    let out = run(
        &mut b,
        "START 15\nINFO timeout_turn 200\nINFO timeout_match 0\nINFO time_left 2147483647\nINFO rule 4\nBEGIN\n",
    );
    assert_eq!(out, vec!["OK", "7,7"]);
}

#[test]
fn a_position_with_a_black_stone_on_a_now_forbidden_point_is_taken_as_it_stands() {
    // Black f8 g8 h6 h7 and h8 itself: h8 would be a double-three if played now (row f8-g8-h8,
    // column h6-h7-h8, all ends open), but it is on the board already. White (us, to move) has
    // four stones far away. Protocol coordinates: x = column, y = row from the top.
    let mut b = brain(Duration::ZERO);
    let out = run(&mut b, "START 15\nINFO rule 4\nINFO timeout_turn 300\nBOARD\n5,7,2\n0,0,1\n6,7,2\n14,0,1\n7,9,2\n0,14,1\n7,8,2\n14,14,1\n7,7,2\nDONE\n");
    assert_eq!(out[0], "OK");
    assert!(!out[1].starts_with("ERROR"), "{out:?}");
    // Impossible input is still an error: a point twice, off the board, counts fitting no side.
    let out = run(&mut b, "BOARD\n1,1,1\n1,1,2\nDONE\nBOARD\n15,1,1\nDONE\nBOARD\n1,1,1\n2,2,1\nDONE\n");
    assert!(out.iter().all(|a| a.starts_with("ERROR")), "{out:?}");
}

#[test]
fn black_whose_only_defence_is_forbidden_answers_at_once_with_a_legal_move() {
    // White i9 j10 k11 l12 (a four; m13 is blocked by Black) threatens h8, and h8 is a
    // double-three for Black (f8 g8 h8 and h6 h7 h8). Black (us) has no defence but must
    // answer with some legal move, in time, never h8.
    let mut b = brain(Duration::ZERO);
    let stones = "5,7,1\n8,6,2\n6,7,1\n9,5,2\n7,9,1\n10,4,2\n7,8,1\n11,3,2\n12,2,1\n0,14,2\n";
    let out =
        run(&mut b, &format!("START 15\nINFO rule 4\nINFO timeout_turn 500\nYXBOARD\n{stones}DONE\nYXSHOWFORBID\n"));
    assert_eq!(out, vec!["OK".to_string(), "FORBID 0707.".to_string()], "h8 is forbidden for Black");
    let t0 = Instant::now();
    let out = run(&mut b, &format!("BOARD\n{stones}DONE\n"));
    let took = t0.elapsed();
    assert!(!out[0].starts_with("ERROR") && out[0] != "7,7", "{out:?}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

/// 200 timed moves at `timeout_turn` 100 ms with every batch costing 12 ms: the answer time of
/// each (command in to answer out) must stay within the turn plus a margin of 100 ms (the
/// checked-clock search overshoots by less than one batch and reserves what it measures; the
/// margin is for the scheduler of a loaded machine: at load average 9 on 2 cores one answer took
/// 136 ms, while on a calmer one the worst was 84 ms; managers allow far more, e.g. 1.5 s).
#[test]
fn two_hundred_moves_at_100_ms_answer_within_the_turn() {
    let turn = 100u64;
    let margin = Duration::from_millis(100);
    let mut b = brain(Duration::from_millis(12));
    run(
        &mut b,
        &format!("START 15\nINFO rule 4\nINFO timeout_turn {turn}\nINFO timeout_match 0\nINFO time_left 2147483647\n"),
    );
    let mut times = Vec::new();
    let mut rng = 12345u64;
    while times.len() < 200 {
        let mut last = run(&mut b, "RESTART\nBEGIN\n")[1].clone();
        for _ in 0..40 {
            // The opponent answers next to the brain's last stone, at a pseudo-random empty point.
            let (x, y) =
                last.split_once(',').map(|(x, y)| (x.parse::<i64>().unwrap(), y.parse::<i64>().unwrap())).unwrap();
            let mut reply = None;
            for _ in 0..64 {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let dx = ((rng >> 33) % 5) as i64 - 2;
                let dy = ((rng >> 40) % 5) as i64 - 2;
                let (px, py) = (x + dx, y + dy);
                if (0..15).contains(&px)
                    && (0..15).contains(&py)
                    && !b.moves().contains(&renju_arena::wire::from_wire(px, py, 15).unwrap())
                {
                    reply = Some((px, py));
                    break;
                }
            }
            let Some((px, py)) = reply else { break };
            let t0 = Instant::now();
            let out = run(&mut b, &format!("TURN {px},{py}\n"));
            let took = t0.elapsed();
            match out.first() {
                Some(a) if !a.starts_with("ERROR") => {
                    times.push(took);
                    last = a.clone();
                }
                _ => break, // the game is over
            }
            if times.len() == 200 {
                break;
            }
        }
    }
    times.sort();
    let limit = Duration::from_millis(turn);
    let worst = *times.last().unwrap();
    eprintln!(
        "200 moves at timeout_turn {turn} ms, 12 ms per batch: median {:?}, 90th percentile {:?}, worst {:?} (overshoot {:?})",
        times[100],
        times[180],
        worst,
        worst.saturating_sub(limit)
    );
    assert!(worst <= limit + margin, "worst answer {worst:?} is past {turn} ms + {margin:?}");
}

/// A brain whose search agent keeps its tree between moves, at a fixed playout limit.
fn reusing_brain(playouts: u64) -> Brain {
    let factory = Box::new(move |size: usize| -> anyhow::Result<Box<dyn Agent>> {
        let eval = EvaluatorSpec::parse("heuristic")?.build(size, &no_models)?;
        Ok(Box::new(MctsAgent::new(eval, SearchSettings { reuse_tree: true, ..SearchSettings::default() })))
    });
    Brain::new(factory, BrainOptions { max_playouts: Some(playouts), ..BrainOptions::default() })
}

/// Every answer line, MESSAGE included.
fn run_all(b: &mut Brain, script: &str) -> Vec<String> {
    let mut lines = script.lines().map(String::from).collect::<Vec<_>>().into_iter();
    let mut out = Vec::new();
    while let Some(l) = lines.next() {
        out.extend(b.handle(&l, &mut lines));
    }
    out
}

/// The move (last line) and, when a search chose it, the `(playouts, reused)` of its
/// `MESSAGE playouts N reused R value V`.
fn move_and_search(out: &[String]) -> (String, Option<(u64, u64)>) {
    let search = out.iter().find_map(|l| {
        let w: Vec<&str> = l.strip_prefix("MESSAGE playouts ")?.split(' ').collect();
        assert_eq!(w[1], "reused", "{l}");
        Some((w[0].parse().unwrap(), w[2].parse().unwrap()))
    });
    let mv = out.last().unwrap_or_else(|| panic!("no answer: {out:?}")).clone();
    assert!(!mv.starts_with("ERROR") && !mv.starts_with("MESSAGE"), "{out:?}");
    (mv, search)
}

/// Through the protocol: two tree-reusing brains play each other at 200 playouts a move. After
/// its first search, every move of brain A starts from the tree kept since its last move (the
/// root has visits: the opponent's reply was searched there) and searches up to 200 in total;
/// `TAKEBACK`, `YXHASHCLEAR` and an unrelated `BOARD` start afresh.
#[test]
fn the_brain_keeps_the_subtree_of_the_moves_played_between_turns() {
    let cap = 200;
    let (mut a, mut b) = (reusing_brain(cap), reusing_brain(cap));
    let setup = "START 15\nINFO rule 4\n";
    run_all(&mut a, setup);
    run_all(&mut b, setup);
    let mut a_move = move_and_search(&run_all(&mut a, "BEGIN")).0;
    assert_eq!(a_move, "7,7");
    let mut searches = Vec::new();
    let mut b_move = String::new();
    for _ in 0..5 {
        b_move = move_and_search(&run_all(&mut b, &format!("TURN {a_move}"))).0;
        let (mv, search) = move_and_search(&run_all(&mut a, &format!("TURN {b_move}")));
        a_move = mv;
        searches.push(search.expect("A's move came from a search"));
    }
    assert_eq!(searches[0], (cap, 0), "the first search starts from an empty tree");
    for &(playouts, reused) in &searches[1..] {
        assert!(reused > 0, "the tree was reused: {searches:?}");
        assert_eq!(playouts + reused, cap, "the limit counts the total: {searches:?}");
    }
    // TAKEBACK of A's last move and B's reply, then the same reply: the very position of A's
    // last search, yet afresh.
    assert_eq!(run_all(&mut a, &format!("TAKEBACK {a_move}\nTAKEBACK {b_move}")), ["OK", "OK"]);
    let (mv, search) = move_and_search(&run_all(&mut a, &format!("TURN {b_move}")));
    assert_eq!(search, Some((cap, 0)), "after TAKEBACK");
    // The game goes on with reuse, until YXHASHCLEAR.
    let b_move = move_and_search(&run_all(&mut b, &format!("TURN {mv}"))).0;
    let (mv, search) = move_and_search(&run_all(&mut a, &format!("TURN {b_move}")));
    assert!(search.is_some_and(|(_, r)| r > 0), "{search:?}");
    let b_move = move_and_search(&run_all(&mut b, &format!("TURN {mv}"))).0;
    let (_, search) = move_and_search(&run_all(&mut a, &format!("YXHASHCLEAR\nTURN {b_move}")));
    assert_eq!(search, Some((cap, 0)), "after YXHASHCLEAR");
    // A BOARD of another position: afresh.
    let (_, search) = move_and_search(&run_all(&mut a, "BOARD\n3,3,1\n11,11,2\n3,4,1\n11,10,2\nDONE"));
    assert_eq!(search, Some((cap, 0)), "after an unrelated BOARD");
}

/// A renju position with White (ours) to move: Black 7,7 and 7,8, White 8,8.
const WHITE_TO_MOVE: &str = "START 15\nINFO rule 4\nYXBOARD\n7,7,2\n8,8,1\n7,8,2\nDONE";

/// The `MESSAGE NBEST k x,y visits=V winrate=W pv=...` lines of `out`: `(k, point, visits,
/// winrate, pv)`.
fn nbest_lines(out: &[String]) -> Vec<(usize, String, u64, f32, Vec<String>)> {
    out.iter()
        .filter_map(|l| {
            let rest = l.strip_prefix("MESSAGE NBEST ")?;
            let (head, pv) = rest.split_once(" pv=").unwrap_or_else(|| panic!("no pv in '{l}'"));
            let w: Vec<&str> = head.split(' ').collect();
            assert_eq!(w.len(), 4, "{l}");
            let visits = w[2].strip_prefix("visits=").unwrap().parse().unwrap();
            let winrate = w[3].strip_prefix("winrate=").unwrap().parse().unwrap();
            Some((w[0].parse().unwrap(), w[1].to_string(), visits, winrate, pv.split(' ').map(String::from).collect()))
        })
        .collect()
}

/// `YXNBEST 3`: three candidate lines, most visited first, each with a principal variation from
/// its own point, then the move (the first candidate), which is recorded: a `TURN` on it is an
/// error. Malformed counts get `ERROR` and the brain keeps answering.
#[test]
fn yxnbest_reports_the_candidates_and_plays_the_best() {
    let mut b = reusing_brain(300);
    run_all(&mut b, WHITE_TO_MOVE);
    let out = run_all(&mut b, "YXNBEST 3");
    let lines = nbest_lines(&out);
    assert_eq!(lines.iter().map(|l| l.0).collect::<Vec<_>>(), [1, 2, 3], "{out:?}");
    for w in lines.windows(2) {
        assert!(w[0].2 >= w[1].2, "most visited first: {out:?}");
    }
    for l in &lines {
        assert_eq!(l.4[0], l.1, "the pv starts at its candidate: {out:?}");
        assert!((0.0..=1.0).contains(&l.3), "{out:?}");
        assert!(!["7,7", "8,8", "7,8"].contains(&l.1.as_str()), "an occupied candidate: {out:?}");
    }
    let (mv, search) = move_and_search(&out);
    assert_eq!(mv, lines[0].1, "the move is the most visited candidate: {out:?}");
    assert_eq!(search.map(|s| s.0 + s.1), Some(300));
    assert!(run_all(&mut b, &format!("TURN {mv}"))[0].starts_with("ERROR"), "the move was recorded");
    for bad in ["YXNBEST x", "YXNBEST 0", "YXNBEST"] {
        let out = run_all(&mut b, bad);
        assert!(out.len() == 1 && out[0].starts_with("ERROR"), "{bad}: {out:?}");
    }
    let info = run_all(&mut b, "YXSHOWINFO");
    assert!(!info.is_empty() && info.iter().all(|l| l.starts_with("MESSAGE")), "{info:?}");
    assert!(info[0].contains("renju-zero"), "{info:?}");
}

/// `INFO max_node N` caps the playouts of a move below the brain's own cap; 0 lifts it again.
#[test]
fn info_max_node_caps_the_playouts_of_a_move() {
    for (nodes, want) in [(40, 40), (0, 300)] {
        let mut b = reusing_brain(300);
        let out =
            run_all(&mut b, &format!("START 15\nINFO rule 4\nINFO max_node {nodes}\nBOARD\n7,7,2\n8,8,1\n7,8,2\nDONE"));
        let (_, search) = move_and_search(&out);
        assert_eq!(search.map(|s| s.0 + s.1), Some(want), "max_node {nodes}: {out:?}");
    }
}

/// `YXBALANCEONE bias`: the answer is, among the candidates of the same search (a second brain
/// reports them all with `YXNBEST`) with at least 5% of the top visits, the one whose value is
/// closest to the bias; it is recorded. `YXBALANCETWO`: two distinct empty points, not recorded.
#[test]
fn yxbalance_answers_the_most_even_searched_moves() {
    for bias in [0.0f32, -0.4] {
        let mut all = reusing_brain(300);
        run_all(&mut all, WHITE_TO_MOVE);
        let cands = nbest_lines(&run_all(&mut all, "YXNBEST 225"));
        assert!(cands.len() > 3);
        let floor = (cands[0].2 / 20).max(1);
        let dist = |w: f32| (2.0 * w - 1.0 - bias).abs();
        let best = cands.iter().filter(|c| c.2 >= floor).map(|c| dist(c.3)).fold(f32::INFINITY, f32::min);

        let mut b = reusing_brain(300);
        run_all(&mut b, WHITE_TO_MOVE);
        let out = run_all(&mut b, &format!("YXBALANCEONE {bias}"));
        let mv = out.last().unwrap();
        let c = cands.iter().find(|c| &c.1 == mv).unwrap_or_else(|| panic!("{mv} is no candidate: {out:?}"));
        assert!(c.2 >= floor, "{mv} has {} visits, under {floor}: {out:?}", c.2);
        assert!(dist(c.3) <= best + 0.002, "{mv}: {} from the bias, the best {best}: {out:?}", dist(c.3));
        assert!(run_all(&mut b, &format!("TURN {mv}"))[0].starts_with("ERROR"), "the move was recorded");
    }
    let mut b = reusing_brain(300);
    run_all(&mut b, WHITE_TO_MOVE);
    let out = run_all(&mut b, "YXBALANCETWO 0");
    let two: Vec<&str> = out.last().unwrap().split(' ').collect();
    assert_eq!(two.len(), 2, "{out:?}");
    assert_ne!(two[0], two[1]);
    for p in &two {
        assert!(!["7,7", "8,8", "7,8"].contains(p), "{out:?}");
    }
    // Not recorded: the opponent may still play our first point.
    let after = run_all(&mut b, &format!("TURN {}", two[0]));
    assert!(!after.last().unwrap().starts_with("ERROR"), "{after:?}");
    for bad in ["YXBALANCEONE x", "YXBALANCETWO 2"] {
        let out = run_all(&mut b, bad);
        assert!(out.len() == 1 && out[0].starts_with("ERROR"), "{bad}: {out:?}");
    }
}

/// `YXSTOP` read while the brain thinks ends that search at once, and only that one: the next
/// command's search runs its full time.
#[test]
fn yxstop_stops_the_search_under_way_and_no_later_one() {
    use renju_arena::gomocup::serve_interruptible;
    let mut b = brain(Duration::from_millis(5));
    let script = "START 15\nINFO rule 4\nINFO timeout_turn 30000\nBOARD\n7,7,2\n8,8,1\n7,8,2\nDONE\nYXSTOP\n\
                  INFO timeout_turn 400\nTURN 6,6\nEND\n";
    let mut out = Vec::new();
    let t = Instant::now();
    serve_interruptible(&mut b, std::io::Cursor::new(script.as_bytes().to_vec()), &mut out).unwrap();
    let took = t.elapsed();
    let out = String::from_utf8(out).unwrap();
    // Without the stop the first move would search for 25 s.
    assert!(took < Duration::from_secs(15), "took {took:?}:\n{out}");
    let playouts: Vec<u64> =
        out.lines().filter_map(|l| l.strip_prefix("MESSAGE playouts ")?.split(' ').next()?.parse().ok()).collect();
    assert_eq!(playouts.len(), 2, "{out}");
    // One batch of 8 (the default) after the root's evaluation, at most.
    assert!(playouts[0] <= 16, "the stopped search went on: {playouts:?}");
    // 310 ms at 5 ms per batch of 8: about 500 playouts; an early stop would leave a batch.
    assert!(playouts[1] > 100, "the later search was stopped too: {playouts:?}");
    let moves = out.lines().filter(|l| !l.starts_with("MESSAGE") && l.contains(',')).count();
    assert_eq!(moves, 2, "{out}");
}
