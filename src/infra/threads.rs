//! Work side by side on the cores, for the parts of a run that read or write large files.

/// The result of a scoped thread; its panic, if it panicked, goes on in the caller.
pub fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}
