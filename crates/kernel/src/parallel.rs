//! Work split across the cores, its results kept in order.

/// `work` applied to each of `items`, the results in the items' order. When `worth_splitting`
/// and the machine has more than one core, the items are dealt out in runs of neighbours, one
/// run per core, on scoped threads; otherwise they are done on the calling thread, since
/// starting threads costs more than a little work. A panic in `work` is resumed on the caller.
pub fn map_in_order<T: Send, R: Send>(
    items: Vec<T>,
    worth_splitting: bool,
    work: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if cores < 2 || !worth_splitting || items.len() < 2 {
        return items.into_iter().map(work).collect();
    }
    let per_core = items.len().div_ceil(cores);
    let mut runs = Vec::with_capacity(cores);
    let mut rest = items;
    while rest.len() > per_core {
        let tail = rest.split_off(per_core);
        runs.push(rest);
        rest = tail;
    }
    runs.push(rest);
    let work = &work;
    std::thread::scope(|scope| {
        let workers: Vec<_> = runs
            .into_iter()
            .map(|run| scope.spawn(move || run.into_iter().map(work).collect::<Vec<_>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_order_of_the_items_split_or_not() {
        let items: Vec<u32> = (0..1_001).collect();
        let expected: Vec<u64> = items.iter().map(|n| u64::from(*n) * 3).collect();
        for split in [true, false] {
            let threads = std::sync::Mutex::new(std::collections::HashSet::new());
            let results = map_in_order(items.clone(), split, |n| {
                threads.lock().unwrap().insert(std::thread::current().id());
                u64::from(n) * 3
            });
            assert_eq!(results, expected);
            let used = threads.into_inner().unwrap();
            let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
            let caller = used.contains(&std::thread::current().id());
            if split && cores > 1 {
                assert!(!caller && used.len() == cores.min(1_001), "{used:?}");
            } else {
                assert!(caller && used.len() == 1, "{used:?}");
            }
        }
    }
}
