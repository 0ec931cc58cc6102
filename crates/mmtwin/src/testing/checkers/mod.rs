//! Invariant checkers over the whole memory manager, run after every event in debug builds.
//!
//! * `buddy_checker`     — every frame is in exactly one place; free counts equal list lengths;
//!                         no two free buddies are left unmerged; lists are well linked.
//! * `watermark_checker` — watermarks are ordered and fit within the zone's managed pages.

pub mod buddy_checker;
pub mod watermark_checker;

use crate::mm::Mm;

/// Runs every checker; the first violation is returned as a message.
pub fn check_all(mm: &Mm) -> Result<(), String> {
    buddy_checker::check(mm)?;
    watermark_checker::check(mm)?;
    Ok(())
}
