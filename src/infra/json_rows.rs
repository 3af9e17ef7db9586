//! Long lists of rows serialised on worker threads, in order: report.json's per-query rows,
//! observations and diagnostics, which are most of a large report's bytes. Outside
//! [`in_parallel`] a list is the plain sequence, for every serializer.

/// Runs `f` (a report.json writer on this thread) with [`rows`] rendering on workers.
pub fn in_parallel<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            PARALLEL_ROWS.set(self.0);
        }
    }
    let _restore = Restore(PARALLEL_ROWS.replace(true));
    f()
}

thread_local! {
    /// Set inside [`in_parallel`] on this thread: [`rows`] may render on workers.
    static PARALLEL_ROWS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Rows per piece a worker renders at a time.
pub const ROWS_PER_PIECE: usize = 256;

/// Most workers rendering one list's rows.
const ROW_WORKERS: usize = 2;

/// A long list of rows (`#[serde(serialize_with = "crate::infra::json_rows::rows")]`): written
/// as the plain sequence, except inside [`in_parallel`] (report.json's writer), where up to
/// two worker threads render its rows compactly (`serde_json`'s compact form, which is how
/// report.json writes a row) a few hundred at a time, and this thread writes each piece in
/// order as it comes. The bytes are those of the plain sequence (tested with the report
/// layout); a re-score of 20,000 queries writes its report.json's rows on two cores instead of
/// one. Memory: at most two pieces waiting per worker.
pub fn rows<T, S>(rows: &Vec<T>, s: S) -> Result<S::Ok, S::Error>
where
    T: serde::Serialize + Sync,
    S: serde::Serializer,
{
    use serde::ser::{Error, SerializeSeq};
    use serde_json::value::RawValue;
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(ROW_WORKERS);
    if !PARALLEL_ROWS.get() || workers < 2 || rows.len() < 2 * ROWS_PER_PIECE {
        return s.collect_seq(rows);
    }
    type Piece = Result<Vec<Box<RawValue>>, String>;
    std::thread::scope(|scope| {
        let pieces: Vec<std::sync::mpsc::Receiver<Piece>> = (0..workers)
            .map(|w| {
                let (tx, rx) = std::sync::mpsc::sync_channel::<Piece>(2);
                scope.spawn(move || {
                    for piece in rows.chunks(ROWS_PER_PIECE).skip(w).step_by(workers) {
                        let rendered = piece
                            .iter()
                            .map(serde_json::value::to_raw_value)
                            .collect::<Result<Vec<_>, _>>()
                            .map_err(|e| e.to_string());
                        // the writer stopped (it failed): nothing more is wanted
                        if tx.send(rendered).is_err() {
                            return;
                        }
                    }
                });
                rx
            })
            .collect();
        let mut seq = s.serialize_seq(Some(rows.len()))?;
        for i in 0..rows.len().div_ceil(ROWS_PER_PIECE) {
            let piece = pieces[i % workers]
                .recv()
                .map_err(|_| S::Error::custom("a row-rendering thread stopped"))?
                .map_err(S::Error::custom)?;
            for row in &piece {
                seq.serialize_element(row)?;
            }
        }
        seq.end()
    })
}
