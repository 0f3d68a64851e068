//! The allocator of the musl builds: dlmalloc behind the standard library's mutex.
//!
//! musl's own allocator (`mallocng`) maps and unmaps a page for nearly every new size
//! class, which costs a short-lived hook more than its own work; dlmalloc (the one std
//! uses on wasm) takes memory in large pieces. dlmalloc's ready-made global allocator
//! guards its heap with a `pthread_mutex_t`, and musl's lock and unlock calls are ~50
//! instructions a pair: with a few hundred allocations per stop, a tenth of a bound stop's
//! instructions. `std::sync::Mutex` is a futex with its uncontended path inline (one
//! compare-and-swap to lock, one swap to unlock) and, like the pthread mutex, sleeps when
//! contended rather than spinning, so the scan's threads stay fair on a loaded machine.
//! docs/performance.md has the measurements.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::{Mutex, MutexGuard, PoisonError};

use dlmalloc::Dlmalloc;

/// One dlmalloc heap for the whole process.
pub struct Heap(Mutex<Dlmalloc>);

impl Heap {
    pub const fn new() -> Heap {
        Heap(Mutex::new(Dlmalloc::new()))
    }

    /// The heap, locked. Nothing panics while it is held (dlmalloc does not), so a poisoned
    /// lock cannot mean a heap left half-changed; it is used as is.
    fn lock(&self) -> MutexGuard<'_, Dlmalloc> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for Heap {
    fn default() -> Heap {
        Heap::new()
    }
}

// SAFETY: each method hands dlmalloc the layout the caller gave, as its functions of the
// same names require, and dlmalloc returns null on failure as `GlobalAlloc` requires; the
// mutex makes every call exclusive, since a `Dlmalloc` is not `Sync`.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout has a non-zero size, as GlobalAlloc::alloc requires.
        unsafe { self.lock().malloc(layout.size(), layout.align()) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe { self.lock().calloc(layout.size(), layout.align()) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this heap with this layout (GlobalAlloc::dealloc's contract).
        unsafe { self.lock().free(ptr, layout.size(), layout.align()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this heap with `layout`, `new_size` is non-zero and does
        // not overflow when rounded to the alignment (GlobalAlloc::realloc's contract).
        unsafe {
            self.lock()
                .realloc(ptr, layout.size(), layout.align(), new_size)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_from_the_heap_holds_what_was_written_and_grows_in_place_or_by_copy() {
        let heap = Heap::new();
        let layout = Layout::from_size_align(24, 8).unwrap();
        // SAFETY: non-zero sizes; every pointer is freed with the layout it was made with.
        unsafe {
            let p = heap.alloc(layout);
            assert!(!p.is_null());
            for i in 0..24 {
                *p.add(i) = i as u8;
            }
            let q = heap.realloc(p, layout, 4096);
            assert!(!q.is_null());
            assert_eq!(
                std::slice::from_raw_parts(q, 24),
                (0..24).collect::<Vec<u8>>()
            );
            heap.dealloc(q, Layout::from_size_align(4096, 8).unwrap());
            let z = heap.alloc_zeroed(Layout::from_size_align(512, 64).unwrap());
            assert!(!z.is_null());
            assert_eq!(z as usize % 64, 0);
            assert!(std::slice::from_raw_parts(z, 512).iter().all(|&b| b == 0));
            heap.dealloc(z, Layout::from_size_align(512, 64).unwrap());
        }
    }

    #[test]
    fn threads_allocating_at_once_each_keep_their_own_memory() {
        static HEAP: Heap = Heap::new();
        let threads: Vec<_> = (0..4u8)
            .map(|t| {
                std::thread::spawn(move || {
                    let layout = Layout::from_size_align(64, 8).unwrap();
                    for _ in 0..2000 {
                        // SAFETY: non-zero size, freed with the same layout.
                        unsafe {
                            let p = HEAP.alloc(layout);
                            assert!(!p.is_null());
                            std::ptr::write_bytes(p, t, 64);
                            std::thread::yield_now();
                            assert!(std::slice::from_raw_parts(p, 64).iter().all(|&b| b == t));
                            HEAP.dealloc(p, layout);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
}
