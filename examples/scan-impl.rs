//! Prints which byte-classification implementation this CPU gets (used by
//! `scripts/bench.sh` to label BENCHMARKS.md).
fn main() {
    println!("{}", toolstream::scan::implementation());
}
