//! What the fuzz targets share.

/// The fuzzer's cut points as sorted offsets into an input of `len` bytes (each taken
/// modulo `len + 1`, so any `u16` is a valid cut).
pub fn cut_points(cuts: &[u16], len: usize) -> Vec<usize> {
    let mut out: Vec<usize> = cuts.iter().map(|&c| c as usize % (len + 1)).collect();
    out.sort_unstable();
    out
}
