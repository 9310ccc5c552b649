//! The journal of one pool operation's mutating calls ([`Journal::run`]): it times each
//! call and keeps what was changed, in order, with its outcome, for the operation's log
//! lines. Retries of throttling live inside each adapter (one policy, `crate::retry`). The
//! audit log is not kept here: every mutating call of every resource passes
//! `crate::audit::Audit::run`, through the seam decorators the clients are wrapped in.

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::CloudError;

/// What a mutating call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// Creates an object.
    Create,
    /// Changes an object in place.
    Update,
    /// Deletes an object.
    Delete,
}

/// One mutating call: what, on which object, how long it took, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Mutation {
    /// Create, update or delete.
    pub verb: Verb,
    /// The object, e.g. `train-east/train-spot` (cluster and group).
    pub target: String,
    /// From the call to its answer (not to readiness: waits are separate).
    pub took: Duration,
    /// `None` when the cloud accepted it, else the error's text.
    pub error: Option<String>,
}

/// The ordered record of one operation's mutating calls.
#[derive(Debug, Default)]
pub struct Journal {
    entries: Mutex<Vec<Mutation>>,
}

impl Journal {
    /// An empty journal.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs the mutating call `call` on `target`, recording it.
    pub async fn run<T, F>(&self, verb: Verb, target: &str, call: F) -> Result<T, CloudError>
    where
        F: Future<Output = Result<T, CloudError>>,
    {
        let start = Instant::now();
        let result = call.await;
        let record = Mutation {
            verb,
            target: target.to_string(),
            took: start.elapsed(),
            error: result.as_ref().err().map(ToString::to_string),
        };
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(record);
        result
    }

    /// Every call recorded so far, in order.
    pub fn entries(&self) -> Vec<Mutation> {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::block_on as run;

    #[test]
    fn records_each_call_in_order_with_its_outcome() {
        let j = Journal::new();
        assert_eq!(
            run(j.run(Verb::Create, "c/a", async { Ok::<_, CloudError>(7) })).unwrap(),
            7
        );
        let e = run(j.run(Verb::Delete, "c/b", async {
            Err::<(), _>(CloudError::Quota("no more".into()))
        }));
        assert!(e.is_err());
        let got: Vec<(Verb, String, bool)> = j
            .entries()
            .into_iter()
            .map(|m| (m.verb, m.target, m.error.is_some()))
            .collect();
        assert_eq!(
            got,
            vec![
                (Verb::Create, "c/a".into(), false),
                (Verb::Delete, "c/b".into(), true)
            ]
        );
        assert!(j.entries()[1].error.as_deref().unwrap().contains("no more"));
    }
}
