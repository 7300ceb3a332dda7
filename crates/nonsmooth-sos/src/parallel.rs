//! The one parallel map of the crate's sweeps: cases on all cores (rayon), results in input
//! order, progress lines reported on the calling thread as cases finish.

use rayon::prelude::*;
use std::sync::mpsc;

/// Maps `f` over `cases` on rayon's pool. `f` returns the result and a progress line, which
/// `progress` receives on the calling thread (so `progress` needs no `Sync`).
pub fn map_with_progress<C, R, F>(cases: &[C], f: F, progress: &dyn Fn(&str)) -> Vec<R>
where
    C: Sync,
    R: Send,
    F: Fn(&C) -> (R, String) + Sync,
{
    let (tx, rx) = mpsc::channel::<String>();
    let f = &f;
    std::thread::scope(|scope| {
        let worker = scope.spawn(move || {
            cases
                .par_iter()
                .map_with(tx, |tx, c| {
                    let (r, line) = f(c);
                    // The receiver lives until the scope ends; a closed channel only loses
                    // a progress line.
                    let _ = tx.send(line);
                    r
                })
                .collect::<Vec<R>>()
        });
        for line in rx {
            progress(&line);
        }
        worker
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}
