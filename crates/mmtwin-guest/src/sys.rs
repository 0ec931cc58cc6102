//! The few system calls the workloads need beyond std: CPU binding, rusage, anonymous mappings,
//! pipes, and asking the kernel whether a page is a transparent huge page.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// (user, system) CPU seconds of this process, all threads.
pub fn rusage() -> (f64, f64) {
    // SAFETY: getrusage fills the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(u.ru_utime), s(u.ru_stime))
}

/// Binds the calling thread to `cpu` (ignored if the CPU does not exist).
pub fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET stays within it for cpu < CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu < libc::CPU_SETSIZE as usize {
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
}

/// Raises the open-file limit as far as the kernel lets root (pipes hold "kernel" regions).
pub fn raise_nofile() {
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open").ok().and_then(|s| s.trim().parse::<u64>().ok()).unwrap_or(1 << 20);
    let r = libc::rlimit { rlim_cur: nr_open, rlim_max: nr_open };
    // SAFETY: plain system call on a valid struct.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) };
}

/// An anonymous private mapping of `len` bytes aligned to `align`; None when mmap fails.
pub fn mmap_anon(len: usize, align: usize) -> Option<(*mut u8, usize, usize)> {
    let total = len + align.saturating_sub(4096);
    // SAFETY: an anonymous mapping of our own; we only touch it within [base, base+total).
    let p = unsafe { libc::mmap(std::ptr::null_mut(), total, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0) };
    if p == libc::MAP_FAILED {
        return None;
    }
    let base = p as usize;
    let start = if align > 4096 { base.div_ceil(align) * align } else { base };
    // Unmap the slack on both sides so the region is exactly [start, start+len).
    unsafe {
        if start > base {
            libc::munmap(base as *mut libc::c_void, start - base);
        }
        let end = base + total;
        if end > start + len {
            libc::munmap((start + len) as *mut libc::c_void, end - start - len);
        }
    }
    Some((start as *mut u8, len, start))
}

pub fn munmap(addr: *mut u8, len: usize) {
    // SAFETY: the caller unmaps a mapping it made.
    unsafe { libc::munmap(addr as *mut libc::c_void, len) };
}

pub fn madvise(addr: *mut u8, len: usize, advice: libc::c_int) {
    // SAFETY: advice on our own mapping.
    unsafe { libc::madvise(addr as *mut libc::c_void, len, advice) };
}

/// A pipe whose buffer holds `bytes` written into it: kernel pages (GFP_HIGHUSER, not movable)
/// that stay until the pipe is closed. Returns its two descriptors.
pub fn pipe_holding(bytes: usize) -> Option<[libc::c_int; 2]> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors; fcntl/write on them.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) != 0 {
            return None;
        }
        libc::fcntl(fds[1], libc::F_SETPIPE_SZ, bytes.max(4096) as libc::c_int);
        let page = [0x5au8; 4096];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(4096);
            if libc::write(fds[1], page.as_ptr() as *const libc::c_void, n) <= 0 {
                break;
            }
            left -= n;
        }
    }
    Some(fds)
}

pub fn close_pipe(fds: [libc::c_int; 2]) {
    // SAFETY: closing descriptors we own.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
}

/// Reads /proc/self/pagemap and /proc/kpageflags (root) to tell whether the page mapped at
/// `addr` belongs to a transparent huge page.
pub struct ThpProbe {
    pagemap: Option<File>,
    kpageflags: Option<File>,
}

const KPF_THP: u64 = 1 << 22;

impl ThpProbe {
    pub fn new() -> ThpProbe {
        ThpProbe { pagemap: File::open("/proc/self/pagemap").ok(), kpageflags: File::open("/proc/kpageflags").ok() }
    }

    pub fn is_thp(&self, addr: usize) -> Option<bool> {
        let (pm, kf) = (self.pagemap.as_ref()?, self.kpageflags.as_ref()?);
        let mut b = [0u8; 8];
        pm.read_exact_at(&mut b, (addr / 4096 * 8) as u64).ok()?;
        let entry = u64::from_le_bytes(b);
        if entry & (1 << 63) == 0 {
            return Some(false);
        }
        let pfn = entry & ((1 << 55) - 1);
        if pfn == 0 {
            return None;
        }
        kf.read_exact_at(&mut b, pfn * 8).ok()?;
        Some(u64::from_le_bytes(b) & KPF_THP != 0)
    }
}
