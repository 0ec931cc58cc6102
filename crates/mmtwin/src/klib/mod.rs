//! Pieces of the kernel's lib/ that the memory manager uses (named `klib` because `lib` is the
//! crate root's file name).

pub mod flex_proportions;
pub mod proportions;
