//! File system invariants. Directory i_mutex: a task that holds a directory's i_mutex is not
//! also waiting for it, and no task waits twice. A delete under way (`Mm::truncating`): its
//! inode is in core, unlinked, unused, off the writeback and LRU lists and without page cache,
//! and every block it has still to read is one of the file's indirect blocks. Journals: the
//! log of the transactions still in it fits the journal, and the tail never passes a transaction
//! whose buffers are not all home (cleanup_journal_tail's rule); the block device inode is on
//! the dirty list exactly while it has dirty buffers.

use crate::mm::Mm;

pub fn check(mm: &Mm) -> Result<(), String> {
    for (sb, s) in mm.sbs.iter().enumerate() {
        for (id, d) in s.dirs.iter().enumerate() {
            let m = &d.i_mutex;
            for (k, &(t, _)) in m.wait_list.iter().enumerate() {
                if m.owner == Some(t) {
                    return Err(format!("sb {sb} directory {id}: task {t} holds the i_mutex and waits for it"));
                }
                if m.wait_list.iter().skip(k + 1).any(|&(u, _)| u == t) {
                    return Err(format!("sb {sb} directory {id}: task {t} is on the i_mutex wait list twice"));
                }
            }
        }
    }
    for (j, jr) in mm.journals.iter().enumerate() {
        if jr.used() > jr.blocks {
            return Err(format!("journal {j}: its transactions' log is {} blocks, more than the journal's {}", jr.used(), jr.blocks));
        }
        let dirty = !jr.checkpoint.is_empty();
        if jr.dirty_since.is_some() != dirty || jr.dirty_key.is_some() != dirty {
            return Err(format!("journal {j}: {} dirty buffers, but the block device inode's dirtied_when is {:?} and its place on the dirty list {:?}", jr.checkpoint.len(), jr.dirty_since, jr.dirty_key));
        }
        if let Some(&pinned) = jr.checkpoint.values().min() {
            if jr.log.front().is_none_or(|&(tail, _)| pinned < tail) {
                return Err(format!("journal {j}: the tail passed the transaction committed at {pinned} ns, whose buffers are not all home"));
            }
        }
    }
    for (&ino, left) in &mm.truncating {
        let Some(Some(i)) = mm.inodes.get(ino as usize) else {
            return Err(format!("inode {ino}: its delete is under way but it is not in core"));
        };
        if i.nlink != 0 || i.i_count != 0 || i.dirty_key.is_some() || i.lru_key.is_some() {
            return Err(format!("inode {ino}: its delete is under way but nlink {} i_count {} dirty {} on LRU {}", i.nlink, i.i_count, i.dirty_key.is_some(), i.lru_key.is_some()));
        }
        if mm.mapping(i.mapping).nrpages() != 0 {
            return Err(format!("inode {ino}: its delete is under way with pages still cached"));
        }
        if let Some(&(b, _)) = left.iter().find(|&&(b, _)| !i.meta_blocks.values().any(|&m| m == b)) {
            return Err(format!("inode {ino}: its delete would read block {b}, not one of its indirect blocks"));
        }
    }
    Ok(())
}
