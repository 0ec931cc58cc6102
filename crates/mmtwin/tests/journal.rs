//! Mechanism tests of the ext3/ext4 journals (jbd, jbd2) and of where the file systems put
//! data and metadata: one kernel behaviour each.

mod common;
use common::{boot_fs, boot_fs_disk, run_io, woken_for_request};
use mmtwin::block::SECTORS_PER_PAGE;
use mmtwin::fs::jbd::{Kjournald, BLOCKS_PER_GROUP, COMMIT_INTERVAL_NS, ITABLE_BLOCKS};
use mmtwin::mm::mm_types::*;
use mmtwin::mm::{Mm, Pfn};
use mmtwin::sim::rng::Rng;
use mmtwin::sim::{After, Task, TaskCx};

fn boot(fs: &str) -> Mm {
    boot_fs(fs)
}

/// A new file with `n` pages written through write().
fn write_file(mm: &mut Mm, n: u32) -> (u32, Vec<Pfn>) {
    let ino = mm.create_file(0, 0).unwrap();
    let mut t = Default::default();
    for i in 0..n {
        assert_eq!(mm.file_write_page(ino, i, 4096, 0, &mut t), mmtwin::mm::filemap::PageIo::Done);
    }
    let mapping = mm.inode(ino).mapping;
    (ino, (0..n).map(|i| mm.find_get_page(mapping, i).unwrap()).collect())
}


/// Steps `task` from time `now` (completing I/O whenever it waits, and letting the time of a
/// wait shorter than `pass_ns` go by) until it goes to sleep with nothing else to wait for;
/// returns that sleep.
fn settle(mm: &mut Mm, task: &mut dyn Task, now: u64, pass_ns: u64) -> After {
    mm.now_ns = now;
    let mut rng = Rng::new(1);
    for _ in 0..1000 {
        let mut cx = TaskCx { now: mm.now_ns, cpu: 0, tid: 0, mm, rng: &mut rng, timed_out: false };
        match task.step(&mut cx).after {
            After::Continue => {}
            a @ (After::Wait(_) | After::WaitTimeout(..)) => {
                if !mm.io_timers.is_empty() {
                    run_io(mm);
                    continue;
                }
                match a {
                    After::WaitTimeout(_, t) if t < pass_ns => mm.now_ns += t,
                    a => return a,
                }
            }
            a => return a,
        }
    }
    panic!("{} did not settle", task.name());
}

/// Steps the journal thread at time `now` until it sleeps with nothing to wait for.
fn run_journal(mm: &mut Mm, k: &mut Kjournald, now: u64) -> After {
    settle(mm, k, now, 0)
}

/// Starts the commit due at COMMIT_INTERVAL_NS without completing any I/O: kjournald's first
/// two steps take the running transaction and submit its ordered data; returns the second
/// step's sleep.
fn start_commit(mm: &mut Mm, k: &mut Kjournald) -> After {
    mm.now_ns = COMMIT_INTERVAL_NS;
    let mut rng = Rng::new(1);
    let mut cx = TaskCx { now: mm.now_ns, cpu: 0, tid: 0, mm, rng: &mut rng, timed_out: false };
    k.step(&mut cx);
    k.step(&mut cx).after
}

#[test]
fn ext3_commit_writes_the_transactions_data_first_then_its_metadata_to_the_log() {
    let mut mm = boot("ext3");
    let (ino, pfns) = write_file(&mut mm, 8);
    let meta = mm.journals[0].running.meta.clone();
    // create: the inode bitmap and inode table block and the root directory's leaf with the
    // new name; the block allocations: the block bitmap; both: the group descriptor block.
    let fs = mm.sbs[0].fs_type;
    let i_ino = mm.inode(ino).i_ino;
    let leaf = mm.sbs[0].dirs[0].blocks[0];
    let expect = [1, fs.block_bitmap_of(0), fs.inode_bitmap_of(i_ino), fs.inode_block_of(i_ino), leaf];
    assert_eq!(meta, expect.into_iter().collect(), "{meta:?}");
    assert!(mm.journals[0].running.inodes.contains(&ino), "data=ordered files the inode's data");
    let mut k = Kjournald::new(0, "kjournald".into());
    // Before the commit interval: the thread sleeps until the commit timer.
    match run_journal(&mut mm, &mut k, 1_000_000) {
        After::WaitTimeout(_, t) => assert_eq!(t, COMMIT_INTERVAL_NS - 1_000_000),
        a => panic!("{a:?}"),
    }
    assert_eq!(mm.bdevs[0].stats.journal_commits, 0);
    run_journal(&mut mm, &mut k, COMMIT_INTERVAL_NS);
    let s = &mm.bdevs[0].stats;
    assert_eq!(s.journal_commits, 1);
    assert_eq!(s.ordered_data_pages, 8, "the commit wrote the data");
    // It wrote the buffers; the pages stay dirty, with clean buffers.
    assert!(pfns.iter().all(|&p| mm.pages[p as usize].flags & (PG_DIRTY | PG_BUF_CLEAN | PG_WRITEBACK | PG_BUF_LOCKED) == PG_DIRTY | PG_BUF_CLEAN));
    // One descriptor, five metadata copies, the commit block.
    assert_eq!(s.journal_blocks, 7);
    assert_eq!(s.requests[1], 3, "data, then the log blocks, then the commit block");
    let j = &mm.journals[0];
    assert_eq!(j.checkpoint.keys().copied().collect::<Vec<_>>(), meta.into_iter().collect::<Vec<_>>());
    assert!(j.running.meta.is_empty());
    // The log went to the journal area, in the middle of the file system.
    assert!(j.first >= mm.sbs[0].blocks / 2 - BLOCKS_PER_GROUP);
}

#[test]
fn pages_an_ext3_commit_wrote_stay_dirty_until_a_writepage_finds_their_buffers_clean() {
    // 3.0 jbd, data=ordered: journal_submit_data_buffers locks each dirty buffer, clears its
    // dirty bit and submits it; the page keeps PG_dirty and its count in NR_FILE_DIRTY, and
    // never goes under page writeback. A ->writepage (block_write_full_page) while the write is
    // in flight cannot lock the buffer and redirties the page; afterwards it finds nothing to
    // write, and the page's writeback begins and ends at once: no I/O, counted as written.
    use mmtwin::fs::Writepage;
    use mmtwin::mm::mmzone::ZoneStat;
    let mut mm = boot("ext3");
    let (_, pfns) = write_file(&mut mm, 8);
    let dirty = mm.global_page_state(ZoneStat::NrFileDirty);
    let mut k = Kjournald::new(0, "kjournald".into());
    start_commit(&mut mm, &mut k);
    assert_eq!(mm.bdevs[0].stats.ordered_data_pages, 8, "the data went out");
    assert!(pfns.iter().all(|&p| mm.pages[p as usize].flags & (PG_DIRTY | PG_BUF_LOCKED | PG_WRITEBACK) == PG_DIRTY | PG_BUF_LOCKED));
    assert_eq!(mm.global_page_state(ZoneStat::NrFileDirty), dirty, "still dirty to the VM");
    assert_eq!(mm.global_page_state(ZoneStat::NrWriteback), 0, "not page writeback");
    // A writeback walk meanwhile writes nothing and goes on past them (done_index).
    let ino = mm.mapping(mm.pages[pfns[0] as usize].mapping).host as u32;
    assert_eq!(mm.writeback_single_inode(ino, 1024, true, false), (0, false));
    assert_eq!(mm.inode(ino).writeback_index, 8, "the next walk starts after them");
    // In flight: redirtied.
    assert_eq!(mm.writepage(pfns[0]), Writepage::Redirtied);
    assert_ne!(mm.pages[pfns[0] as usize].flags & PG_DIRTY, 0);
    // Completed: the buffers are unlocked, the pages still dirty.
    run_io(&mut mm);
    assert!(pfns.iter().all(|&p| mm.pages[p as usize].flags & (PG_DIRTY | PG_BUF_CLEAN | PG_BUF_LOCKED) == PG_DIRTY | PG_BUF_CLEAN));
    let (requests, written) = (mm.bdevs[0].stats.requests[1], mm.global_page_state(ZoneStat::NrWritten));
    assert_eq!(mm.writepage(pfns[0]), Writepage::Done);
    assert_eq!(mm.pages[pfns[0] as usize].flags & (PG_DIRTY | PG_BUF_CLEAN | PG_WRITEBACK), 0, "clean");
    assert_eq!(mm.global_page_state(ZoneStat::NrFileDirty), dirty - 1);
    assert_eq!(mm.global_page_state(ZoneStat::NrWritten), written + 1);
    assert_eq!(mm.bdevs[0].stats.requests[1], requests, "no I/O");
    // A write makes the buffers dirty again: the next writepage writes them.
    let mut t = Default::default();
    assert_eq!(mm.file_write_page(ino, 1, 4096, 0, &mut t), mmtwin::mm::filemap::PageIo::Done);
    assert_eq!(mm.pages[pfns[1] as usize].flags & PG_BUF_CLEAN, 0);
    assert_eq!(mm.writepage(pfns[1]), Writepage::Submitted);
}

#[test]
fn ext4_commit_logs_only_metadata_and_leaves_delalloc_data_to_the_flusher() {
    let mut mm = boot("ext4");
    let (_, pfns) = write_file(&mut mm, 8);
    assert_eq!(mm.journals[0].running.meta.len(), 4, "the create's blocks; no data block is allocated yet");
    assert!(!mm.journals[0].ordered_data);
    let mut k = Kjournald::new(0, "jbd2/sda-8".into());
    run_journal(&mut mm, &mut k, COMMIT_INTERVAL_NS);
    let s = &mm.bdevs[0].stats;
    assert_eq!((s.journal_commits, s.journal_blocks, s.ordered_data_pages), (1, 6, 0));
    assert!(pfns.iter().all(|&p| mm.pages[p as usize].flags & PG_DIRTY != 0), "still dirty");
}

/// Steps the device's flusher from time `now` until it sleeps for its next period or for
/// good (its short waits for I/O pass).
fn run_flusher(mm: &mut Mm, f: &mut mmtwin::fs::fs_writeback::Flusher, now: u64) -> After {
    settle(mm, f, now, 1_000_000_000)
}

#[test]
fn committed_metadata_goes_home_with_the_block_device_inode_in_the_flushers_kupdate_turn() {
    // The buffers are dirty pages of the block device inode, dirtied at the first commit. The
    // flusher's periodic (kupdate) writeback takes it once it has been dirty for
    // dirty_expire, as any inode, and writes its buffers in block order, a later commit's
    // too.
    let mut mm = boot("ext3");
    let expire = mm.sysctl.dirty_expire_centisecs * 10_000_000;
    let mut k = Kjournald::new(0, "kjournald".into());
    let mut f = mmtwin::fs::fs_writeback::Flusher::new(0, 500);
    write_file(&mut mm, 4);
    run_journal(&mut mm, &mut k, COMMIT_INTERVAL_NS);
    let committed = mm.now_ns;
    assert_eq!(mm.journals[0].dirty_since, Some(committed));
    // A second file, committed 10 s later: its data goes with its commit (data=ordered).
    mm.now_ns = committed + 10_000_000_000;
    write_file(&mut mm, 13);
    run_journal(&mut mm, &mut k, committed + 15_000_000_000);
    assert!(mm.journals[0].checkpoint.values().any(|&t| t > committed), "the second commit dirtied newer buffers");
    assert_eq!(mm.journals[0].dirty_since, Some(committed), "the inode was already dirty");
    // Before dirty_expire the periodic writeback leaves it alone.
    run_flusher(&mut mm, &mut f, committed + expire - 1);
    assert_eq!(mm.bdevs[0].stats.checkpoint_blocks, 0);
    let home: Vec<u64> = mm.journals[0].checkpoint.keys().copied().collect();
    let (sectors, used) = (mm.bdevs[0].stats.sectors[1], mm.journals[0].used());
    run_flusher(&mut mm, &mut f, committed + expire + 5_000_000_000);
    assert_eq!(mm.bdevs[0].stats.checkpoint_blocks, home.len() as u64, "all of them, the newer ones too");
    assert_eq!(mm.bdevs[0].stats.sectors[1], sectors + home.len() as u64 * SECTORS_PER_PAGE);
    let j = &mm.journals[0];
    assert!(j.checkpoint.is_empty());
    assert_eq!((j.dirty_since, j.dirty_key), (None, None), "the inode is clean");
    // The log is released only when the journal needs the space (cleanup_journal_tail).
    assert_eq!((j.used(), j.log.len()), (used, 2));
}

#[test]
fn a_journal_short_of_space_releases_the_log_of_transactions_home_and_writes_only_the_oldest_pinned_one() {
    let mut mm = boot("ext3");
    let expire = mm.sysctl.dirty_expire_centisecs * 10_000_000;
    let mut k = Kjournald::new(0, "kjournald".into());
    write_file(&mut mm, 2);
    run_journal(&mut mm, &mut k, COMMIT_INTERVAL_NS);
    let t1 = mm.now_ns;
    write_file(&mut mm, 13);
    run_journal(&mut mm, &mut k, t1 + COMMIT_INTERVAL_NS);
    let t2 = mm.now_ns;
    let j = &mm.journals[0];
    let (l1, l2) = (j.log[0].1, j.log[1].1);
    assert_eq!(j.used(), l1 + l2);
    let newer: Vec<u64> = j.checkpoint.iter().filter(|(_, &t)| t == t2).map(|(&b, _)| b).collect();
    let oldest = j.checkpoint.len() - newer.len();
    assert!(!newer.is_empty() && oldest > 0);
    // A journal the two transactions fill to three quarters (j_max_transaction_buffers free):
    // the oldest is still pinned, so its buffers, and only they, are written and waited for,
    // and then its log is released.
    mm.journals[0].blocks = (l1 + l2) * 4 / 3;
    assert!((l1 + l2) * 4 >= mm.journals[0].blocks * 3 && l2 * 4 < mm.journals[0].blocks * 3);
    run_journal(&mut mm, &mut k, t2 + 1);
    assert_eq!(mm.bdevs[0].stats.checkpoint_blocks, oldest as u64);
    let j = &mm.journals[0];
    assert_eq!(j.checkpoint.keys().copied().collect::<Vec<_>>(), newer);
    assert_eq!((j.used(), j.log.len()), (l2, 1));
    // Once the second transaction's buffers have gone home by writeback, a journal short of
    // space moves its tail past it without writing anything.
    let mut f = mmtwin::fs::fs_writeback::Flusher::new(0, 500);
    run_flusher(&mut mm, &mut f, t2 + expire + 5_000_000_000);
    assert!(mm.journals[0].checkpoint.is_empty());
    let written = mm.bdevs[0].stats.checkpoint_blocks;
    mm.journals[0].blocks = l2;
    run_journal(&mut mm, &mut k, t2 + expire + 5_000_000_001);
    assert_eq!(mm.bdevs[0].stats.checkpoint_blocks, written, "nothing written");
    assert_eq!((mm.journals[0].used(), mm.journals[0].log.len()), (0, 0));
}

#[test]
fn data_allocation_skips_each_groups_bitmaps_and_inode_table() {
    // ext3: superblock and descriptors, two bitmaps and the inode table in front of group 0's
    // data, then the root directory's block and lost+found's four; a file crossing into group
    // 1 jumps over that group's metadata.
    let mut mm = boot("ext3");
    let ino = mm.create_file(0, 0).unwrap();
    let first_data = 2 + 2 + ITABLE_BLOCKS;
    assert_eq!(mm.sbs[0].dirs[0].blocks[0], first_data);
    assert_eq!(mm.get_block(ino, 0), mm.sbs[0].sector_of(first_data + 5));
    let mut mm = boot("ext3");
    let ino = mm.create_file(0, 0).unwrap();
    mm.lay_out_file(ino, 40_000);
    let ext = &mm.inode(ino).extents;
    let group1 = ext.iter().find(|e| mm.sbs[0].block_of(e.1) >= BLOCKS_PER_GROUP).unwrap();
    assert_eq!(mm.sbs[0].block_of(group1.1), BLOCKS_PER_GROUP + 2 + ITABLE_BLOCKS);
    // ext4's flex_bg packs 16 groups' metadata into the first: group 1 is all data, and a
    // regular file's goal is the flex group's second group (the first is left to
    // directories).
    let mut mm = boot("ext4");
    let ino = mm.create_file(0, 0).unwrap();
    mm.lay_out_file(ino, 40_000);
    assert_eq!(mm.inode(ino).extents.len(), 1);
    assert_eq!(mm.sbs[0].block_of(mm.inode(ino).extents[0].1), BLOCKS_PER_GROUP);
}

#[test]
fn ext3_logs_an_indirect_block_with_the_13th_data_block() {
    let mut mm = boot("ext3");
    let (ino, _) = write_file(&mut mm, 12);
    let before = mm.journals[0].running.meta.clone();
    let s12 = mm.bmap(ino, 11).unwrap();
    let mut t = Default::default();
    mm.file_write_page(ino, 12, 4096, 0, &mut t);
    let s13 = mm.bmap(ino, 12).unwrap();
    assert_eq!(s13, s12 + 2 * SECTORS_PER_PAGE, "the indirect block sits between");
    let added: Vec<u64> = mm.journals[0].running.meta.difference(&before).copied().collect();
    assert_eq!(added, vec![mm.sbs[0].block_of(s12) + 1]);
}

#[test]
fn xfs_and_ext2_have_no_journal() {
    for fs in ["ext2", "xfs"] {
        let mut mm = boot(fs);
        write_file(&mut mm, 4);
        assert!(mm.journals.is_empty() && mm.sbs[0].journal.is_none(), "{fs}");
    }
}

#[test]
fn a_commit_files_ordered_inodes_in_the_order_their_data_was_first_written() {
    let mut mm = boot("ext3");
    // y is created before z, so its number is lower, but z's data is written first.
    let y = mm.create_file(0, 0).unwrap();
    let (z, _) = write_file(&mut mm, 2);
    assert!(y < z);
    let mut more = Default::default();
    for i in 0..2 {
        assert_eq!(mm.file_write_page(y, i, 4096, 0, &mut more), mmtwin::mm::filemap::PageIo::Done);
    }
    assert_eq!(mm.file_write_page(z, 2, 4096, 0, &mut more), mmtwin::mm::filemap::PageIo::Done);
    // jbd walks t_sync_datalist in the order the buffers were written (jbd2 t_inode_list in
    // the order the inodes were filed), not by inode number.
    assert_eq!(mm.journals[0].running.inodes, vec![z, y]);
}

#[test]
fn an_ext3_commit_sleeps_for_a_request_holding_one_data_page_and_then_fills_that_request() {
    // journal_submit_data_buffers submits a buffer at a time, merged into requests in the
    // commit's plug: with the pool used up, the thread sleeps in get_request_wait holding the
    // first page of a request, and woken goes on filling it. Its requests come out as they do
    // with a pool that never runs out.
    let commit = |nr_requests: u32| {
        let mut mm = boot_fs_disk("ext3", &format!("disk = {{ max_sectors_kb = 16, nr_requests = {nr_requests} }}"));
        let (_, pfns) = write_file(&mut mm, 400);
        let mut k = Kjournald::new(0, "kjournald".into());
        let mut rng = Rng::new(1);
        mm.now_ns = COMMIT_INTERVAL_NS;
        let mut sleeps = 0;
        for _ in 0..10_000 {
            mm.woken_for_request();
            let mut cx = TaskCx { now: mm.now_ns, cpu: 0, tid: 0, mm: &mut mm, rng: &mut rng, timed_out: false };
            let after = k.step(&mut cx).after;
            if mm.holds_granted_bio() {
                mm.submit_held_bio();
            }
            if mm.rq_wait_owed.is_some() {
                sleeps += 1;
                let held = mm.held_bio[0].as_ref().expect("a held bio");
                assert_eq!(held.bio.pages.len(), 1, "it holds one page");
                assert_ne!(mm.pages[held.bio.pages[0] as usize].flags & PG_BUF_LOCKED, 0);
                run_io(&mut mm);
                woken_for_request(&mut mm);
                continue;
            }
            match after {
                After::Continue => {}
                After::Wait(_) | After::WaitTimeout(..) if !mm.io_timers.is_empty() => run_io(&mut mm),
                _ => break,
            }
        }
        assert!(pfns.iter().all(|&p| mm.pages[p as usize].flags & (PG_BUF_CLEAN | PG_WRITEBACK | PG_BUF_LOCKED) == PG_BUF_CLEAN));
        let s = &mm.bdevs[0].stats;
        assert_eq!((s.journal_commits, s.ordered_data_pages), (1, 400));
        (sleeps, s.requests[1], s.sectors[1])
    };
    let (sleeps, requests, sectors) = commit(16);
    assert!(sleeps >= 2, "{sleeps} sleeps for a request");
    let (none, requests_big, sectors_big) = commit(1024);
    assert_eq!(none, 0);
    assert_eq!((requests, sectors), (requests_big, sectors_big));
}

#[test]
fn a_commit_whose_log_write_finds_the_sync_pool_used_up_sleeps_holding_it() {
    // 3.x submit_bh → submit_bio → get_request_wait: the journal's log blocks wait for a free
    // request like any other write. With the sync pool used up, the thread sleeps holding
    // the log's bio, which is queued only once a request is freed.
    use mmtwin::block::{Bio, Dir, Pool};
    let mut mm = boot_fs_disk("ext4", "disk = { nr_requests = 4 }");
    write_file(&mut mm, 8);
    mm.now_ns = COMMIT_INTERVAL_NS;
    // Another task's five WRITE_SYNC requests far apart: one on the device, one taken from
    // the scheduler while it is busy, three queued.
    mm.sched.current_pid = 1;
    let io = mm.new_dio(usize::MAX);
    for i in 0..5u64 {
        let mut b = Bio::new(Dir::Write, 1_000_000 + i * 10_000, 2 * i as Pfn).req_sync();
        b.dio = io;
        mm.dios[io as usize - 1].remaining += 1;
        mm.submit_bio(0, b);
    }
    mm.sched.current_pid = 0;
    assert_eq!(mm.bdevs[0].allocated(Pool::Sync), 4, "the sync pool is used up");
    let mut k = Kjournald::new(0, "jbd2/sda-8".into());
    let mut rng = Rng::new(1);
    let mut cx = TaskCx { now: mm.now_ns, cpu: 0, tid: 0, mm: &mut mm, rng: &mut rng, timed_out: false };
    k.step(&mut cx);
    assert!(mm.rq_wait_owed.is_some(), "asleep in get_request_wait");
    let held = mm.held_bio[0].as_ref().expect("the log's bio, held");
    assert_eq!((held.bio.pages.len(), held.bio.sync), (5, true), "the descriptor and four metadata copies, WRITE_SYNC");
    assert_eq!(mm.bdevs[0].allocated(Pool::Sync), 4, "nothing more queued");
    // The requests complete; woken, the thread queues its bio, and the commit ends.
    run_io(&mut mm);
    woken_for_request(&mut mm);
    assert!(mm.held_bio[0].is_none());
    let now = mm.now_ns;
    run_journal(&mut mm, &mut k, now);
    let s = &mm.bdevs[0].stats;
    assert_eq!((s.journal_commits, s.journal_blocks), (1, 6));
    assert_eq!(s.requests[1], 7, "five, the log, the commit block");
}

#[test]
fn the_journal_writes_with_write_sync_from_the_pool_reads_use_and_the_flusher_from_writebacks() {
    // 3.0 jbd submits a commit's ordered data and log blocks WRITE_SYNC (REQ_SYNC): their
    // requests come from the queue's sync pool, which reads use, so they never make the queue
    // write-congested (bdi_write_congested reads the async pool). The flusher's writeback
    // (WB_SYNC_NONE) writes WRITE, from the async pool.
    use mmtwin::block::Pool;
    let mut mm = boot("ext3");
    let (ino, _) = write_file(&mut mm, 8);
    let mut k = Kjournald::new(0, "kjournald".into());
    start_commit(&mut mm, &mut k);
    let (rq, _) = mm.bdevs[0].in_flight.as_ref().expect("the commit's data write");
    assert_eq!((rq.pages.len(), rq.sync), (8, true), "WRITE_SYNC");
    assert_eq!(mm.bdevs[0].pool(rq.dir, rq.sync), Pool::Sync);
    run_journal(&mut mm, &mut k, COMMIT_INTERVAL_NS);
    assert_eq!(mm.bdevs[0].stats.journal_commits, 1);
    // The next write dirties the buffers again; the flusher's walk writes them WRITE.
    let mut t = Default::default();
    assert_eq!(mm.file_write_page(ino, 0, 4096, 0, &mut t), mmtwin::mm::filemap::PageIo::Done);
    mm.writeback_single_inode(ino, 1024, true, false);
    let (rq, _) = mm.bdevs[0].in_flight.as_ref().expect("the flusher's write");
    assert!(!rq.sync);
    assert_eq!(mm.bdevs[0].pool(rq.dir, rq.sync), Pool::Async);
}

#[test]
fn a_write_that_needs_a_block_waits_while_the_commit_writes_the_bitmaps_copy_to_the_log() {
    // 3.0 do_get_write_access: a buffer of the committing transaction whose copy is being
    // written to the log is BJ_Shadow, and a task that needs write access to it sleeps until
    // kjournald has seen the log written. Allocating a block needs the group's block bitmap
    // and the group descriptors, which the commit is logging.
    use mmtwin::mm::filemap::PageIo;
    let mut mm = boot("ext3");
    mm.journals[0].shadow_wait = 4242; // a queue of its own (the engine's is not set up here)
    let (ino, _) = write_file(&mut mm, 8);
    let mut k = Kjournald::new(0, "kjournald".into());
    assert!(matches!(start_commit(&mut mm, &mut k), After::Wait(_)), "waits for its data");
    let mut rng = Rng::new(1);
    let mut step = |mm: &mut Mm, k: &mut Kjournald| {
        let mut cx = TaskCx { now: mm.now_ns, cpu: 0, tid: 0, mm, rng: &mut rng, timed_out: false };
        k.step(&mut cx).after
    };
    assert!(mm.jbd_shadow_wait(ino, 8).is_none(), "nothing is shadowed while the data goes out");
    run_io(&mut mm);
    step(&mut mm, &mut k);
    assert!(mm.journals[0].shadow.is_some(), "the log write is in flight");
    let mut t = Default::default();
    assert_eq!(mm.file_write_page(ino, 8, 4096, 0, &mut t), PageIo::Wait(4242), "the bitmap is shadowed");
    assert!(mm.jbd_create_shadow_wait(0).is_some(), "so are the descriptors a create needs");
    run_io(&mut mm);
    mm.wakeups.clear();
    step(&mut mm, &mut k);
    assert!(mm.journals[0].shadow.is_none() && mm.wakeups.contains(&4242), "unshadowed, its waiters woken");
    assert_eq!(mm.bdevs[0].stats.shadow_waits, 2, "the write and the create found it shadowed");
    assert_eq!(mm.file_write_page(ino, 8, 4096, 0, &mut t), PageIo::Done);
}

#[test]
fn fdatasync_writes_the_dirty_pages_sync_then_has_the_transaction_of_their_blocks_committed() {
    // 3.0 vfs_fsync_range: filemap_write_and_wait_range (WB_SYNC_ALL: every dirty page,
    // WRITE_SYNC), then ext3_sync_file: log_start_commit of the transaction that allocated
    // the file's blocks (i_datasync_tid) wakes kjournald, which commits it without waiting
    // for the 5 s timer, and log_wait_commit sleeps until j_commit_sequence reaches it.
    use mmtwin::block::Pool;
    use mmtwin::fs::sync::{Fsync, FsyncPhase, FsyncStep};
    let mut mm = boot("ext3");
    let (ino, pfns) = write_file(&mut mm, 8);
    let tid = mm.journals[0].tid;
    assert_eq!(mm.inode(ino).datasync_tid, tid, "the write allocated the blocks in the running transaction");
    let mut f = Fsync::default();
    mm.now_ns = 1_000_000;
    let step = mm.vfs_fsync(ino, &mut f);
    let (rq, _) = mm.bdevs[0].in_flight.as_ref().expect("the fsync's write");
    assert_eq!((rq.pages.len(), rq.sync), (8, true), "WRITE_SYNC");
    assert_eq!(mm.bdevs[0].pool(rq.dir, rq.sync), Pool::Sync);
    assert!(pfns.iter().all(|&p| mm.pages[p as usize].flags & (PG_WRITEBACK | PG_DIRTY) == PG_WRITEBACK));
    assert_eq!(step, FsyncStep::Wait(mm.page_waitqueue(pfns[0])), "filemap_fdatawait");
    run_io(&mut mm);
    let step = mm.vfs_fsync(ino, &mut f);
    assert_eq!((f.phase, step), (FsyncPhase::Commit, FsyncStep::Wait(mm.journals[0].done_wait)));
    assert_eq!(mm.journals[0].commit_request, tid);
    // kjournald commits at once, 5 s before its timer.
    let mut k = Kjournald::new(0, "kjournald".into());
    let now = mm.now_ns;
    run_journal(&mut mm, &mut k, now);
    assert!(mm.now_ns < COMMIT_INTERVAL_NS);
    assert_eq!((mm.bdevs[0].stats.journal_commits, mm.journals[0].commit_sequence), (1, tid));
    assert_eq!(mm.vfs_fsync(ino, &mut f), FsyncStep::Done);
    assert!(pfns.iter().all(|&p| mm.pages[p as usize].flags & (PG_WRITEBACK | PG_DIRTY) == 0));
    // A second fdatasync with nothing new to commit returns at once.
    let mut g = Fsync::default();
    assert_eq!(mm.vfs_fsync(ino, &mut g), FsyncStep::Done);
}
