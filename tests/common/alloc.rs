//! A counting global allocator for the test binary: each thread's live bytes, its peak
//! and its number of allocations, so that a test can assert what a run cost in memory
//! while the other tests run on their threads (`fuzz/src/lib.rs` includes this file for the
//! fuzz targets' own allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// [`System`], counting per thread.
pub struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

fn add(delta: isize, allocation: bool) {
    // `try_with`: nothing is counted while the thread's locals are being torn down.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
    if allocation {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every call is passed to `System` unchanged; the counting only touches
// thread-local cells, which never allocate (const-initialised, no destructor).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize, true);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize), false);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize, true);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize, true);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// What `f` cost on this thread: the most bytes it had allocated at once beyond what was
/// live when it began, and the number of allocations (and reallocations) it made.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, u64) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let count = COUNT.with(Cell::get);
    let out = f();
    let peak = PEAK.with(Cell::get) - start;
    (out, peak.max(0) as usize, COUNT.with(Cell::get) - count)
}
