//! `renju-zero`: the command-line interface.
fn main() {
    println!("renju-zero");
}
