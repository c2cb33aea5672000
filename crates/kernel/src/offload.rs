//! The `Offload` port: CPU work long enough to hold up an async worker (hashing a large
//! publish) runs where it holds up nothing, and the use case awaits its result. The server
//! hands it to the runtime's blocking pool; tests to a thread of its own.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;

use crate::InfraError;

/// What a job returns, its type erased so that the port stays object-safe.
pub type Done = Box<dyn Any + Send>;

/// CPU work with no I/O, run to its end wherever the offload puts it.
pub type Job = Box<dyn FnOnce() -> Done + Send>;

/// What an offload's run completes with.
pub type Running = Pin<Box<dyn Future<Output = Result<Done, InfraError>> + Send>>;

/// Runs jobs away from the async workers.
pub trait Offload: Send + Sync + std::fmt::Debug {
    /// A future that completes with what `job` returned, once it has run off the async
    /// workers; nothing is started before it is first polled. A panic in the job is resumed
    /// on whoever awaits it, as if the job had run there.
    ///
    /// The future's error: the job could not be run (the pool is shutting down).
    fn run(&self, job: Job) -> Running;
}

/// What `work` returns, computed through `offload`.
///
/// # Errors
/// [`InfraError`] when the offload could not run it.
pub async fn offloaded<R: Send + 'static>(
    offload: &dyn Offload,
    work: impl FnOnce() -> R + Send + 'static,
) -> Result<R, InfraError> {
    let done = offload
        .run(Box::new(move || -> Done { Box::new(work()) }))
        .await?;
    done.downcast::<R>()
        .map(|result| *result)
        .map_err(|_| InfraError::new("an offloaded job came back with another job's result"))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::task::{Context, Poll, Waker};

    use super::*;

    /// Runs each job where its future is first polled, counting them.
    #[derive(Debug, Default)]
    struct Inline(Mutex<usize>);

    impl Offload for Inline {
        fn run(&self, job: Job) -> Running {
            *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
            Box::pin(async move { Ok(job()) })
        }
    }

    /// Refuses every job, as a pool shutting down does.
    #[derive(Debug)]
    struct Closed;

    impl Offload for Closed {
        fn run(&self, _: Job) -> Running {
            Box::pin(async { Err(InfraError::new("closed")) })
        }
    }

    fn ready<T>(future: impl Future<Output = T>) -> T {
        let mut future = std::pin::pin!(future);
        match future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(value) => value,
            Poll::Pending => panic!("an inline offload never waits"),
        }
    }

    #[test]
    fn a_job_returns_its_own_result_or_the_offloads_refusal() {
        let inline = Inline::default();
        let words = ["a", "bc"];
        let lengths = ready(offloaded(&inline, move || {
            words.iter().map(|w| w.len()).collect::<Vec<_>>()
        }));
        assert_eq!(lengths.ok(), Some(vec![1, 2]));
        assert_eq!(*inline.0.lock().unwrap_or_else(|e| e.into_inner()), 1);

        let refused = ready(offloaded(&Closed, || 1));
        assert!(refused.is_err());
    }
}
