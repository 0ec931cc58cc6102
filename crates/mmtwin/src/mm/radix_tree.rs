//! The page-cache tree (lib/radix-tree.c of 3.x; 6.x's lib/xarray.c has the same shape): a
//! tree of 64-slot nodes indexed by page offset, 6 bits per level, whose leaves hold the
//! frames. Each slot carries tag bits (PAGECACHE_TAG_DIRTY, PAGECACHE_TAG_WRITEBACK); a node's
//! tag bit for a child is set while anything below that child carries the tag, so a tagged
//! lookup (radix_tree_gang_lookup_tag, pagevec_lookup_tag) skips every untagged subtree, and
//! "is the file dirty" (mapping_tagged) is one look at the top node.
//!
//! The nodes of every file live in one arena (`RadixTreeNodes`) and are named by their place
//! in it; a file's `RadixTreeRoot` holds its height and top node. A leaf also holds each page's
//! `page->private`, the slab of its buffer heads (fs/buffer.rs), found on the way to the page.
//! A node records the slab its object was allocated from (`slab`, NIL if none could be had):
//! the node objects are slab memory the twin accounts (mm/filemap.rs preloads them).
//!
//! What the kernel does and this tree does not: shrinking a tree whose top holds only its first
//! child (radix_tree_shrink), exceptional (shadow and swap) entries, and RCU.

use super::mm_types::NIL;
use super::Pfn;

/// Bits of offset per level (RADIX_TREE_MAP_SHIFT, XA_CHUNK_SHIFT).
pub const RADIX_TREE_MAP_SHIFT: u32 = 6;
/// Slots per node.
pub const RADIX_TREE_MAP_SIZE: usize = 1 << RADIX_TREE_MAP_SHIFT;
const MAP_MASK: u64 = RADIX_TREE_MAP_SIZE as u64 - 1;
/// The tallest tree a 32-bit page offset needs (64^6 = 2^36).
pub const RADIX_TREE_MAX_HEIGHT: usize = 6;
/// Tags per slot (RADIX_TREE_MAX_TAGS as the page cache uses them).
pub const RADIX_TREE_MAX_TAGS: usize = 2;
/// PAGECACHE_TAG_DIRTY.
pub const PAGECACHE_TAG_DIRTY: usize = 0;
/// PAGECACHE_TAG_WRITEBACK.
pub const PAGECACHE_TAG_WRITEBACK: usize = 1;

/// struct radix_tree_node: the children (frames in a leaf, node ids above; NIL where empty),
/// which slots are in use (the kernel's `count` is their number), the tag bits per slot, a leaf's
/// per-page private word and the slab of the node's object.
#[derive(Clone, Debug)]
pub struct RadixTreeNode {
    pub slots: [u32; RADIX_TREE_MAP_SIZE],
    pub private: [u32; RADIX_TREE_MAP_SIZE],
    pub present: u64,
    pub tags: [u64; RADIX_TREE_MAX_TAGS],
    pub slab: Pfn,
}

impl RadixTreeNode {
    fn new(slab: Pfn) -> Self {
        RadixTreeNode { slots: [NIL; RADIX_TREE_MAP_SIZE], private: [NIL; RADIX_TREE_MAP_SIZE], present: 0, tags: [0; RADIX_TREE_MAX_TAGS], slab }
    }
}

/// struct radix_tree_root: the height (0 = empty) and the top node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadixTreeRoot {
    pub height: u8,
    pub rnode: u32,
}

impl Default for RadixTreeRoot {
    fn default() -> Self {
        RadixTreeRoot { height: 0, rnode: NIL }
    }
}

/// The height an offset needs (radix_tree_maxindex's inverse): 1 below 64, 2 below 4096, ...
pub fn radix_tree_height_for(index: u32) -> u8 {
    let mut h = 1;
    while (h as usize) < RADIX_TREE_MAX_HEIGHT && (u64::from(index) >> (RADIX_TREE_MAP_SHIFT * h)) != 0 {
        h += 1;
    }
    h as u8
}

/// Slot of `index` in a node at `level` (1 = leaf).
#[inline(always)]
fn offset(index: u64, level: u32) -> usize {
    ((index >> (RADIX_TREE_MAP_SHIFT * (level - 1))) & MAP_MASK) as usize
}

/// What a deletion took out: the item, its private word, and the slabs of the nodes it left
/// empty and freed, leaf first.
#[derive(Clone, Copy, Debug)]
pub struct Deleted {
    pub item: u32,
    pub private: u32,
    pub freed: [Pfn; RADIX_TREE_MAX_HEIGHT],
    pub nr_freed: usize,
}

/// The nodes of every tree, with a free list of places to reuse.
#[derive(Clone, Debug, Default)]
pub struct RadixTreeNodes {
    nodes: Vec<RadixTreeNode>,
    free: Vec<u32>,
}

impl RadixTreeNodes {
    /// The node with id `id`.
    #[inline(always)]
    pub fn node(&self, id: u32) -> &RadixTreeNode {
        &self.nodes[id as usize]
    }

    /// Nodes in use, over all trees.
    pub fn in_use(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    fn alloc(&mut self, slab: Pfn) -> u32 {
        if let Some(id) = self.free.pop() {
            self.nodes[id as usize] = RadixTreeNode::new(slab);
            id
        } else {
            self.nodes.push(RadixTreeNode::new(slab));
            (self.nodes.len() - 1) as u32
        }
    }

    /// The leaf node and slot of `index`, if the tree has a leaf there (whether or not the
    /// slot is in use).
    #[inline]
    pub fn lookup_slot(&self, root: &RadixTreeRoot, index: u32) -> Option<(u32, usize)> {
        let h = u32::from(root.height);
        if h == 0 || u32::from(radix_tree_height_for(index)) > h {
            return None;
        }
        let index = u64::from(index);
        let mut node = root.rnode;
        for level in (2..=h).rev() {
            node = self.nodes[node as usize].slots[offset(index, level)];
            if node == NIL {
                return None;
            }
        }
        Some((node, offset(index, 1)))
    }

    /// radix_tree_lookup: the item at `index`.
    #[inline]
    pub fn lookup(&self, root: &RadixTreeRoot, index: u32) -> Option<u32> {
        let (leaf, off) = self.lookup_slot(root, index)?;
        let item = self.nodes[leaf as usize].slots[off];
        (item != NIL).then_some(item)
    }

    /// The private word of the item at `index` (NIL if none).
    pub fn private(&self, root: &RadixTreeRoot, index: u32) -> u32 {
        self.lookup_slot(root, index).map_or(NIL, |(leaf, off)| self.nodes[leaf as usize].private[off])
    }

    /// Sets the private word of the item at `index`, which must be in the tree; returns the
    /// old word.
    pub fn set_private(&mut self, root: &RadixTreeRoot, index: u32, private: u32) -> u32 {
        let (leaf, off) = self.lookup_slot(root, index).expect("set_private of an offset not in the tree");
        debug_assert!(self.nodes[leaf as usize].present & (1 << off) != 0);
        std::mem::replace(&mut self.nodes[leaf as usize].private[off], private)
    }

    /// Nodes an insertion at `index` would create (what 6.x's xas_nomem allocates): a new top
    /// for each level the tree grows by and the nodes missing on the path below.
    pub fn nodes_needed(&self, root: &RadixTreeRoot, index: u32) -> usize {
        let h = u32::from(root.height);
        let need = u32::from(radix_tree_height_for(index));
        if h == 0 {
            return need as usize;
        }
        if need > h {
            // The index lies beyond the old top: every node under the new top is new.
            return (need - h) as usize + (need - 1) as usize;
        }
        let index = u64::from(index);
        let mut node = root.rnode;
        for level in (2..=h).rev() {
            node = self.nodes[node as usize].slots[offset(index, level)];
            if node == NIL {
                return (level - 1) as usize;
            }
        }
        0
    }

    /// radix_tree_insert: puts `item` at `index` unless the slot is taken (then returns false
    /// and changes nothing). The tree first grows to the height the index needs, each new top
    /// holding the old one in its first slot (radix_tree_extend); then the nodes missing on the
    /// path are made. Each new node's slab comes from `slab()`: the new tops first, lowest
    /// first, then the missing path nodes, leaf first.
    pub fn insert(&mut self, root: &mut RadixTreeRoot, index: u32, item: u32, slab: &mut dyn FnMut() -> Pfn) -> bool {
        debug_assert!(item != NIL);
        if self.lookup(root, index).is_some() {
            return false;
        }
        let need = radix_tree_height_for(index);
        if root.height == 0 {
            root.height = need;
        } else if need > root.height {
            for _ in root.height..need {
                let old = root.rnode;
                let old_tags = self.nodes[old as usize].tags;
                let top = self.alloc(slab());
                let n = &mut self.nodes[top as usize];
                n.slots[0] = old;
                n.present = 1;
                for (t, &o) in n.tags.iter_mut().zip(&old_tags) {
                    *t = u64::from(o != 0);
                }
                root.rnode = top;
            }
            root.height = need;
        }
        let h = u32::from(root.height);
        let idx = u64::from(index);
        // The deepest node on the path that exists, and the levels missing below it.
        let (mut parent, mut level) = (NIL, h + 1);
        let mut node = root.rnode;
        while node != NIL {
            level -= 1;
            if level == 1 {
                break;
            }
            parent = node;
            node = self.nodes[node as usize].slots[offset(idx, level)];
        }
        if node == NIL {
            // Levels `level - 1` (below `parent`, or the top if the tree is empty) down to 1
            // are missing.
            let top_missing = if parent == NIL { h } else { level - 1 };
            let mut slabs = [NIL; RADIX_TREE_MAX_HEIGHT];
            for s in slabs.iter_mut().take(top_missing as usize) {
                *s = slab();
            }
            for l in (1..=top_missing).rev() {
                let id = self.alloc(slabs[(l - 1) as usize]);
                if parent == NIL {
                    root.rnode = id;
                } else {
                    let off = offset(idx, l + 1);
                    let p = &mut self.nodes[parent as usize];
                    p.slots[off] = id;
                    p.present |= 1 << off;
                }
                parent = id;
            }
            node = parent;
        }
        let off = offset(idx, 1);
        let leaf = &mut self.nodes[node as usize];
        leaf.slots[off] = item;
        leaf.present |= 1 << off;
        leaf.private[off] = NIL;
        true
    }

    /// The path from the top to the leaf of `index`: (node, slot) per level, top first.
    fn path(&self, root: &RadixTreeRoot, index: u32) -> Option<([(u32, usize); RADIX_TREE_MAX_HEIGHT], usize)> {
        let h = u32::from(root.height);
        if h == 0 || u32::from(radix_tree_height_for(index)) > h {
            return None;
        }
        let idx = u64::from(index);
        let mut path = [(NIL, 0usize); RADIX_TREE_MAX_HEIGHT];
        let mut node = root.rnode;
        for (i, level) in (1..=h).rev().enumerate() {
            if node == NIL {
                return None;
            }
            let off = offset(idx, level);
            path[i] = (node, off);
            if level > 1 {
                node = self.nodes[node as usize].slots[off];
            }
        }
        Some((path, h as usize))
    }

    /// radix_tree_delete: takes the item at `index` out with its tags; nodes left empty are
    /// freed up to the top (an emptied tree has height 0).
    pub fn delete(&mut self, root: &mut RadixTreeRoot, index: u32) -> Option<Deleted> {
        let (path, h) = self.path(root, index)?;
        let (leaf, off) = path[h - 1];
        let n = &mut self.nodes[leaf as usize];
        if n.present & (1 << off) == 0 {
            return None;
        }
        let mut out = Deleted { item: n.slots[off], private: n.private[off], freed: [NIL; RADIX_TREE_MAX_HEIGHT], nr_freed: 0 };
        n.slots[off] = NIL;
        n.private[off] = NIL;
        n.present &= !(1 << off);
        for t in n.tags.iter_mut() {
            *t &= !(1 << off);
        }
        for i in (0..h).rev() {
            let (node, _) = path[i];
            let empty = self.nodes[node as usize].present == 0;
            let tags = self.nodes[node as usize].tags;
            if empty {
                out.freed[out.nr_freed] = self.nodes[node as usize].slab;
                out.nr_freed += 1;
                self.free.push(node);
            }
            if i == 0 {
                if empty {
                    *root = RadixTreeRoot::default();
                }
                break;
            }
            let (parent, poff) = path[i - 1];
            let p = &mut self.nodes[parent as usize];
            if empty {
                p.slots[poff] = NIL;
                p.present &= !(1 << poff);
            }
            for t in 0..RADIX_TREE_MAX_TAGS {
                if empty || tags[t] == 0 {
                    p.tags[t] &= !(1 << poff);
                }
            }
        }
        Some(out)
    }

    /// radix_tree_tag_set: tags the item at `index` (which must be in the tree), and its
    /// path up to the top.
    pub fn tag_set(&mut self, root: &RadixTreeRoot, index: u32, tag: usize) {
        let (path, h) = self.path(root, index).expect("tag_set of an offset not in the tree");
        debug_assert!(self.nodes[path[h - 1].0 as usize].present & (1 << path[h - 1].1) != 0);
        for &(node, off) in path.iter().take(h).rev() {
            let t = &mut self.nodes[node as usize].tags[tag];
            if *t & (1 << off) != 0 {
                break;
            }
            *t |= 1 << off;
        }
    }

    /// radix_tree_tag_clear: untags the item at `index`, and each node above whose child no
    /// longer carries the tag.
    pub fn tag_clear(&mut self, root: &RadixTreeRoot, index: u32, tag: usize) {
        let Some((path, h)) = self.path(root, index) else { return };
        for &(node, off) in path.iter().take(h).rev() {
            let t = &mut self.nodes[node as usize].tags[tag];
            *t &= !(1 << off);
            if *t != 0 {
                break;
            }
        }
    }

    /// radix_tree_tag_get for the item at `index`.
    pub fn tag_get(&self, root: &RadixTreeRoot, index: u32, tag: usize) -> bool {
        self.lookup_slot(root, index).is_some_and(|(leaf, off)| self.nodes[leaf as usize].tags[tag] & (1 << off) != 0)
    }

    /// radix_tree_tagged (mapping_tagged): whether any item carries the tag.
    #[inline]
    pub fn tagged(&self, root: &RadixTreeRoot, tag: usize) -> bool {
        root.height > 0 && self.nodes[root.rnode as usize].tags[tag] != 0
    }

    /// The first offset at or after `from` whose slot is in use (`tag` None) or carries
    /// `tag`: the step of radix_tree_gang_lookup(_tag) and radix_tree_next_chunk.
    pub fn next(&self, root: &RadixTreeRoot, from: u32, tag: Option<usize>) -> Option<u32> {
        let h = u32::from(root.height);
        if h == 0 {
            return None;
        }
        let limit = 1u64 << (RADIX_TREE_MAP_SHIFT * h);
        let mut index = u64::from(from);
        'restart: while index < limit && index <= u64::from(u32::MAX) {
            let mut node = root.rnode;
            for level in (1..=h).rev() {
                let shift = RADIX_TREE_MAP_SHIFT * (level - 1);
                let off = (index >> shift) & MAP_MASK;
                let n = &self.nodes[node as usize];
                let bits = match tag {
                    None => n.present,
                    Some(t) => n.tags[t],
                } & (!0u64 << off);
                if bits == 0 {
                    // Nothing here at or after the offset: on to the parent's next slot.
                    index = ((index >> (shift + RADIX_TREE_MAP_SHIFT)) + 1) << (shift + RADIX_TREE_MAP_SHIFT);
                    continue 'restart;
                }
                let o = u64::from(bits.trailing_zeros());
                if o != off {
                    index = ((index >> (shift + RADIX_TREE_MAP_SHIFT)) << (shift + RADIX_TREE_MAP_SHIFT)) | (o << shift);
                }
                if level == 1 {
                    return u32::try_from(index).ok();
                }
                node = n.slots[o as usize];
            }
        }
        None
    }

    /// Up to `max` offsets in `[from, to)` whose slots are in use or carry `tag`, in order,
    /// appended to `out` (radix_tree_gang_lookup_tag as pagevec_lookup_tag uses it).
    pub fn gang_lookup(&self, root: &RadixTreeRoot, from: u32, to: u32, max: usize, tag: Option<usize>, out: &mut Vec<u32>) {
        let mut at = from;
        let mut n = 0;
        while n < max && at < to {
            let Some(i) = self.next(root, at, tag) else { break };
            if i >= to {
                break;
            }
            out.push(i);
            n += 1;
            let Some(nx) = i.checked_add(1) else { break };
            at = nx;
        }
    }

    /// Every (offset, item) of a tree in offset order.
    pub fn items(&self, root: &RadixTreeRoot) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut at = 0u32;
        while let Some(i) = self.next(root, at, None) {
            out.push((i, self.lookup(root, i).expect("a present slot")));
            match i.checked_add(1) {
                Some(n) => at = n,
                None => break,
            }
        }
        out
    }

    /// Visits every node of a tree (for the checkers): (node id, level, first offset it
    /// covers).
    pub fn for_each_node(&self, root: &RadixTreeRoot, f: &mut dyn FnMut(u32, u32, u64)) {
        fn walk(t: &RadixTreeNodes, node: u32, level: u32, base: u64, f: &mut dyn FnMut(u32, u32, u64)) {
            f(node, level, base);
            if level == 1 {
                return;
            }
            let n = &t.nodes[node as usize];
            let mut bits = n.present;
            while bits != 0 {
                let o = bits.trailing_zeros();
                bits &= bits - 1;
                walk(t, n.slots[o as usize], level - 1, base | (u64::from(o) << (RADIX_TREE_MAP_SHIFT * (level - 1))), f);
            }
        }
        if root.height > 0 {
            walk(self, root.rnode, u32::from(root.height), 0, f);
        }
    }
}
