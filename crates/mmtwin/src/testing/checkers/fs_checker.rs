//! Directory i_mutex invariants: a task that holds a directory's i_mutex is not also waiting
//! for it, and no task waits twice.

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
    Ok(())
}
