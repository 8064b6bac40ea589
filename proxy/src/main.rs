//! `toolstream-proxy`: the proxy on its own (also reached as `toolstream proxy`).

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    toolstream::proxy::main(&args)
}

/// The allocator `toolstream proxy` has (`mimalloc` in the root Cargo.toml says why).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
