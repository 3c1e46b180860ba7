//! The system calls the daemon makes that no safe wrapper offers (glibc's `malloc_trim`, Linux's
//! `SCHED_IDLE` class), gathered here: the only `unsafe` of the daemon, each block with what makes
//! it sound. (The workspace denies `unsafe_code`; this module alone is allowed it. Calls that a
//! maintained crate wraps safely, such as `geteuid` and the page size, go through `rustix`.)

#![allow(unsafe_code)]

/// Returns the free memory of every arena to the operating system now (glibc only).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn trim_heap() {
    // SAFETY: malloc_trim has no preconditions; it only releases free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim_heap() {}

/// Puts the calling thread in the `SCHED_IDLE` class: it runs only on a core nothing else wants.
/// An error says why it could not (the thread then keeps its priority).
#[cfg(target_os = "linux")]
pub fn idle_priority() -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param for SCHED_IDLE.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn idle_priority() -> std::io::Result<()> {
    Ok(())
}
