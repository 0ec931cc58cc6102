//! The page-cache tree (mm/radix_tree.rs) against an ordered map: random insertions,
//! deletions and tag changes at offsets that make the tree grow to every height, then every
//! lookup, tagged walk and node count compared.

use std::collections::{BTreeMap, BTreeSet};

use mmtwin::mm::radix_tree::{RadixTreeNodes, RadixTreeRoot, PAGECACHE_TAG_DIRTY, PAGECACHE_TAG_WRITEBACK, RADIX_TREE_MAX_TAGS};
use mmtwin::mm::NIL;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(u32),
    Delete(usize),
    Tag(usize, usize, bool),
}

/// Offsets clustered near 0 and at the edges of each height (64^h), where trees grow.
fn index() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => 0u32..200,
        2 => (1u32..6).prop_flat_map(|h| { let edge = 1u64 << (6 * h); ((edge - 3) as u32)..((edge + 3).min(u64::from(u32::MAX)) as u32) }),
        1 => any::<u32>(),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => index().prop_map(Op::Insert),
        3 => any::<usize>().prop_map(Op::Delete),
        4 => (any::<usize>(), 0..RADIX_TREE_MAX_TAGS, any::<bool>()).prop_map(|(w, t, s)| Op::Tag(w, t, s)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_tree_agrees_with_an_ordered_map(ops in prop::collection::vec(op(), 1..300), probes in prop::collection::vec(index(), 8)) {
        let mut t = RadixTreeNodes::default();
        let mut root = RadixTreeRoot::default();
        let mut model: BTreeMap<u32, u32> = BTreeMap::new();
        let mut tags: [BTreeSet<u32>; RADIX_TREE_MAX_TAGS] = Default::default();
        let mut slabs = 0u32;
        for (n, op) in ops.iter().enumerate() {
            match *op {
                Op::Insert(i) => {
                    let fresh = !model.contains_key(&i);
                    let before = t.nodes_needed(&root, i);
                    let in_use = t.in_use();
                    prop_assert_eq!(t.insert(&mut root, i, n as u32, &mut || { slabs += 1; slabs }), fresh);
                    if fresh {
                        model.insert(i, n as u32);
                        prop_assert_eq!(t.in_use(), in_use + before, "nodes_needed({}) said {}", i, before);
                    }
                }
                Op::Delete(w) if !model.is_empty() => {
                    let i = *model.keys().nth(w % model.len()).unwrap();
                    let d = t.delete(&mut root, i).unwrap();
                    prop_assert_eq!(d.item, model.remove(&i).unwrap());
                    for s in &mut tags {
                        s.remove(&i);
                    }
                    prop_assert!(d.freed[..d.nr_freed].iter().all(|&s| s != NIL));
                }
                Op::Tag(w, tag, set) if !model.is_empty() => {
                    let i = *model.keys().nth(w % model.len()).unwrap();
                    if set {
                        t.tag_set(&root, i, tag);
                        tags[tag].insert(i);
                    } else {
                        t.tag_clear(&root, i, tag);
                        tags[tag].remove(&i);
                    }
                }
                _ => {}
            }
        }
        prop_assert_eq!(t.items(&root), model.iter().map(|(&k, &v)| (k, v)).collect::<Vec<_>>());
        for tag in [PAGECACHE_TAG_DIRTY, PAGECACHE_TAG_WRITEBACK] {
            prop_assert_eq!(t.tagged(&root, tag), !tags[tag].is_empty());
            for &from in &probes {
                let want: Vec<u32> = tags[tag].range(from..u32::MAX).copied().take(14).collect();
                let mut got = Vec::new();
                t.gang_lookup(&root, from, u32::MAX, 14, Some(tag), &mut got);
                prop_assert_eq!(got, want, "tag {} from {}", tag, from);
            }
        }
        for &i in probes.iter().chain(model.keys()) {
            prop_assert_eq!(t.lookup(&root, i), model.get(&i).copied());
            prop_assert_eq!(t.tag_get(&root, i, PAGECACHE_TAG_DIRTY), tags[PAGECACHE_TAG_DIRTY].contains(&i));
        }
        // Emptied, the tree has no nodes left.
        for i in model.keys().copied().collect::<Vec<_>>() {
            t.delete(&mut root, i).unwrap();
        }
        prop_assert_eq!(root, RadixTreeRoot::default());
        prop_assert_eq!(t.in_use(), 0);
    }
}

#[test]
fn a_tagged_walk_skips_untagged_subtrees_and_the_top_says_whether_anything_is_tagged() {
    let mut t = RadixTreeNodes::default();
    let mut root = RadixTreeRoot::default();
    for i in 0..10_000u32 {
        assert!(t.insert(&mut root, i, i + 1, &mut || NIL));
    }
    // 157 leaves, 3 second-level nodes and the top.
    assert_eq!((root.height, t.in_use()), (3, 157 + 3 + 1));
    assert!(!t.tagged(&root, PAGECACHE_TAG_DIRTY));
    t.tag_set(&root, 9_000, PAGECACHE_TAG_DIRTY);
    t.tag_set(&root, 17, PAGECACHE_TAG_DIRTY);
    assert!(t.tagged(&root, PAGECACHE_TAG_DIRTY));
    assert_eq!(t.next(&root, 18, Some(PAGECACHE_TAG_DIRTY)), Some(9_000));
    assert_eq!(t.next(&root, 9_001, Some(PAGECACHE_TAG_DIRTY)), None);
    t.tag_clear(&root, 9_000, PAGECACHE_TAG_DIRTY);
    t.tag_clear(&root, 17, PAGECACHE_TAG_DIRTY);
    assert!(!t.tagged(&root, PAGECACHE_TAG_DIRTY), "clearing the last tag clears it up to the top");
    // Deleting a leaf's pages frees the leaf; an offset past the top grows the tree.
    for i in 64..128 {
        t.delete(&mut root, i).unwrap();
    }
    assert_eq!(t.in_use(), 157 + 3);
    assert!(t.insert(&mut root, 300_000, 1, &mut || NIL));
    assert_eq!(root.height, 4);
}
