//! Workload for instruction-count profiling of the rules core (load-independent), e.g.
//! `valgrind --tool=callgrind target/release/examples/rules_profile mask`.
//! Modes: `mask` (Black's legal mask on the 256 benchmark midgame positions, 20 rounds),
//! `game` (200 random renju games with the mask every move), `clone` (100k clones), `place` (5000 x ~180 place+undo),
//! `cpu` (all of the benchmarks of `benches/rules.rs`, timed by this thread's CPU time from
//! `/proc/thread-self/stat`, which a loaded machine distorts far less than wall-clock time).
//! Positions are generated exactly as in `benches/rules.rs`.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use renju_rules::{Board, Color, Point};
use std::hint::black_box;

#[path = "../benches/common/mod.rs"]
mod common;
use common::{midgame_positions, random_game};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "mask".into());
    match mode.as_str() {
        "mask" => {
            let pos = midgame_positions(256);
            let mut n = 0;
            for _ in 0..20 {
                for b in &pos {
                    n += black_box(b.legal_mask(Color::Black)).len();
                }
            }
            println!("mask: {n}");
        }
        "game" => {
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            let mut n = 0;
            for _ in 0..200 {
                n += random_game(&mut rng, 225).stone_count();
            }
            println!("game: {n} stones");
        }
        "clone" => {
            let pos = midgame_positions(4);
            for _ in 0..100_000 {
                black_box(black_box(&pos[3]).clone());
            }
        }
        "place" => {
            let pos = midgame_positions(1);
            let mut b = pos[0].clone();
            let empty: Vec<usize> = b.legal_mask(Color::White).iter().collect();
            for _ in 0..5000 {
                for &i in &empty {
                    b.place(Point::from_index(i, 15), Color::Black);
                    black_box(b.undo());
                }
            }
        }
        "cpu" => cpu_times(),
        other => panic!("unknown mode {other}"),
    }
}

/// CPU seconds (user + system) used so far by this thread (Linux; clock ticks of 10 ms).
fn thread_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("Linux /proc");
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    // After the command name: state is field 3, utime 14, stime 15 (1-based in proc(5)).
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// Run `f` (which does `per_call` units of work) until at least 2 s of CPU time; CPU time per unit.
fn per_unit(per_call: usize, mut f: impl FnMut()) -> f64 {
    let t0 = thread_cpu();
    let mut units = 0usize;
    loop {
        f();
        units += per_call;
        let t = thread_cpu() - t0;
        if t >= 2.0 {
            return t / units as f64;
        }
    }
}

fn cpu_times() {
    let pos = midgame_positions(256);
    let mask = per_unit(256, || {
        for b in &pos {
            black_box(b.legal_mask(Color::Black));
        }
    });
    let mut b = pos[0].clone();
    let empty: Vec<usize> = b.legal_mask(Color::White).iter().collect();
    let place = per_unit(empty.len(), || {
        for &i in &empty {
            b.place(Point::from_index(i, 15), Color::Black);
            black_box(b.undo());
        }
    });
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let game = per_unit(50, || {
        for _ in 0..50 {
            black_box(random_game(&mut rng, 225));
        }
    });
    let clone = per_unit(10_000, || {
        for _ in 0..10_000 {
            black_box(black_box(&pos[3]).clone());
        }
    });
    println!("legal_mask_black/midgame  {:.3} us per position", mask * 1e6);
    println!("place_undo/midgame        {:.1} ns", place * 1e9);
    println!("random_game/renju15       {:.1} us per game = {:.0} games/s", game * 1e6, 1.0 / game);
    println!("clone/midgame_board       {:.1} ns ({} bytes)", clone * 1e9, std::mem::size_of::<Board>());
}
