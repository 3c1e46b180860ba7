//! Gives memory back to the operating system after a burst. glibc's allocator keeps memory freed
//! by a worker thread in that thread's arena for reuse, so after a connection flood or a large
//! import the daemon's resident size stays at its peak although the memory is free. Trimming
//! the arenas every few seconds returns it; with little to give back, a trim costs microseconds.

use std::time::Duration;

use tokio::sync::watch;

const EVERY: Duration = Duration::from_secs(10);

pub async fn trim_periodically(mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(EVERY);
    loop {
        tokio::select! {
            _ = tick.tick() => trim(),
            _ = shutdown.changed() => return,
        }
    }
}

/// Returns the free memory of every arena to the operating system now.
pub fn trim() {
    crate::sys::trim_heap();
}
