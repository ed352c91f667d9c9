//! A cancellation flag shared between whoever started some work and the work.

use crate::error::{Error, ErrorCode, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Cloned handles share one flag; once cancelled it stays cancelled.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// `Err(CANCELLED)` once cancelled; call between steps of long work.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::new(ErrorCode::Cancelled, "the turn was cancelled"))
        } else {
            Ok(())
        }
    }
}
